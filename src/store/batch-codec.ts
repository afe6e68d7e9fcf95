/**
 * The binary form of what the main thread hands the SQLite writer thread in one message (the
 * history's write-back, history-batch.ts): written into one buffer of its own, whose ArrayBuffer is
 * transferred (moved, not copied), and read back field by field in the order written. A structured
 * clone walks every object, array and Buffer of a batch instead: on the main thread, where every
 * microsecond is an evaluation's. (The evaluation log's records are cloned: mostly two long
 * strings each, which cost the same either way.)
 *
 * Numbers are float64 (NaN for null), strings UTF-8 and bytes prefixed with their length (uint32),
 * a nullable string with a byte saying whether it is there. Little-endian.
 */
export class BatchWriter {
  private buf: Buffer;
  private at = 0;

  /** `size`: a first guess of the bytes the batch takes (it grows as needed). */
  constructor(size = 4_096) {
    // Not from Buffer's shared pool: the whole ArrayBuffer is transferred.
    this.buf = Buffer.allocUnsafeSlow(Math.max(64, size));
  }

  u8(value: number): void {
    this.room(1);
    this.buf[this.at++] = value;
  }

  number(value: number | null): void {
    this.room(8);
    this.buf.writeDoubleLE(value ?? NaN, this.at);
    this.at += 8;
  }

  string(value: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: room for the worst case, no measuring pass.
    this.room(4 + value.length * 3);
    const n = this.buf.write(value, this.at + 4, 'utf8');
    this.buf.writeUInt32LE(n, this.at);
    this.at += 4 + n;
  }

  nullableString(value: string | null): void {
    this.u8(value === null ? 0 : 1);
    if (value !== null) this.string(value);
  }

  /** Bytes, or text of one character a byte (latin1; read back by `bytes()` as those bytes). */
  bytes(value: Uint8Array | string): void {
    this.room(4 + value.length);
    this.buf.writeUInt32LE(value.length, this.at);
    if (typeof value === 'string') this.buf.write(value, this.at + 4, value.length, 'latin1');
    else this.buf.set(value, this.at + 4);
    this.at += 4 + value.length;
  }

  /** The batch: a view of this writer's own ArrayBuffer (transfer `.buffer`); the writer is not used after. */
  finish(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.at);
  }

  private room(n: number) {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}

/** Reads a BatchWriter's batch back; a batch cut short throws instead of reading past its end. */
export class BatchReader {
  private readonly buf: Buffer;
  private at = 0;

  constructor(batch: Uint8Array) {
    this.buf = Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength);
  }

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  u8(): number {
    if (this.at >= this.buf.length) throw new RangeError('batch: cut short');
    return this.buf[this.at++]!;
  }

  number(): number | null {
    if (this.at + 8 > this.buf.length) throw new RangeError('batch: cut short');
    const value = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return Number.isNaN(value) ? null : value;
  }

  /** A view of the batch (no copy). */
  bytes(): Buffer {
    const n = this.buf.readUInt32LE(this.at);
    if (this.at + 4 + n > this.buf.length) throw new RangeError('batch: cut short');
    const value = this.buf.subarray(this.at + 4, this.at + 4 + n);
    this.at += 4 + n;
    return value;
  }

  string(): string {
    return this.bytes().toString('utf8');
  }

  nullableString(): string | null {
    return this.u8() === 1 ? this.string() : null;
  }
}
