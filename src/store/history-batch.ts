import type { HistoryWrite } from './sqlite-log-worker.js';

/**
 * A SQLite history write-back as one binary batch, built on the main thread and transferred to the
 * writer thread (its ArrayBuffer moves, nothing is copied), which decodes it into the rows its
 * statements bind (HistoryWrite). As nested arrays of small values and Buffers, the structured
 * clone of a batch was the largest single cost memory added to the main thread (issue 24: a profile
 * of the new-person mix, `postMessage` ~2 % of the main thread and the rows built for it ~1 %,
 * three times the evaluation log's clone of its 2–3 KB strings).
 *
 * Rows, each a tag then its fields, in the order they were added: `subject` (account, key) comes
 * before the rows of that identifier. Numbers are float64 (NaN for null), strings and bytes are
 * prefixed with their byte length (uint32), a set kind is one character. Little-endian.
 */
const SUBJECT = 0;
const KEY = 1;
const COUNT = 2;
const MEMBER = 3;
const EVICTED = 4;
const VELOCITY = 5;

/** The place columns of an identifier row: country, latitude, longitude, radius, ASN, anonymous (1/0). */
export interface KeyColumns {
  firstSeen: number;
  lastSeen: number;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  radiusKm: number | null;
  asn: number | null;
  anonymous: number | null;
}

export class HistoryBatchEncoder {
  private buf: Buffer;
  private at = 0;

  /** `size`: a first guess of the bytes the batch takes (it grows as needed). */
  constructor(size = 4_096) {
    // Not from Buffer's shared pool: the whole ArrayBuffer is transferred.
    this.buf = Buffer.allocUnsafeSlow(Math.max(64, size));
  }

  /** The identifier the rows after it are of. */
  subject(account: string, key: Uint8Array): void {
    this.tag(SUBJECT);
    this.string(account);
    this.bytes(key);
  }

  key(row: KeyColumns): void {
    this.tag(KEY);
    this.number(row.firstSeen);
    this.number(row.lastSeen);
    this.nullableString(row.country);
    this.number(row.latitude);
    this.number(row.longitude);
    this.number(row.radiusKm);
    this.number(row.asn);
    this.number(row.anonymous);
  }

  /** A counter's absolute count; `at` a time within its bucket (pruning's). */
  count(grain: number, bucket: number, n: number, at: number): void {
    this.tag(COUNT);
    this.number(grain);
    this.number(bucket);
    this.number(n);
    this.number(at);
  }

  /** A set member, given as hex (as the history holds it) or bytes. */
  member(kind: string, member: string | Uint8Array, lastSeen: number): void {
    this.tag(MEMBER);
    this.kind(kind);
    this.memberBytes(member);
    this.number(lastSeen);
  }

  /** A member the set no longer keeps. */
  evicted(kind: string, member: string | Uint8Array): void {
    this.tag(EVICTED);
    this.kind(kind);
    this.memberBytes(member);
  }

  velocity(series: string, bucket: number, n: number, expires: number): void {
    this.tag(VELOCITY);
    this.string(series);
    this.number(bucket);
    this.number(n);
    this.number(expires);
  }

  /** The batch: a view of this encoder's ArrayBuffer (transfer `.buffer`); the encoder is not used after. */
  finish(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.at);
  }

  private room(n: number) {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }

  private tag(tag: number) {
    this.room(1);
    this.buf[this.at++] = tag;
  }

  private kind(kind: string) {
    this.room(1);
    this.buf[this.at++] = kind.charCodeAt(0);
  }

  private number(value: number | null) {
    this.room(8);
    this.buf.writeDoubleLE(value ?? NaN, this.at);
    this.at += 8;
  }

  private string(value: string) {
    this.room(4 + Buffer.byteLength(value));
    const n = this.buf.write(value, this.at + 4, 'utf8');
    this.buf.writeUInt32LE(n, this.at);
    this.at += 4 + n;
  }

  private nullableString(value: string | null) {
    this.room(1);
    this.buf[this.at++] = value === null ? 0 : 1;
    if (value !== null) this.string(value);
  }

  private bytes(value: Uint8Array) {
    this.room(4 + value.length);
    this.buf.writeUInt32LE(value.length, this.at);
    this.buf.set(value, this.at + 4);
    this.at += 4 + value.length;
  }

  private memberBytes(member: string | Uint8Array) {
    if (typeof member !== 'string') return this.bytes(member);
    this.room(4 + member.length / 2);
    const n = this.buf.write(member, this.at + 4, 'hex');
    this.buf.writeUInt32LE(n, this.at);
    this.at += 4 + n;
  }
}

/**
 * The writer thread's side: the batch's rows as its statements bind them, in the order each kind
 * was added. Blobs are views of the batch (no copy).
 */
export function decodeHistoryBatch(batch: Uint8Array): HistoryWrite {
  const buf = Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength);
  const write: HistoryWrite = { keys: [], counts: [], members: [], evicted: [], velocity: [] };
  let at = 0;
  let account: string | null = null;
  let key: Buffer | null = null;
  const number = () => {
    const value = buf.readDoubleLE(at);
    at += 8;
    return Number.isNaN(value) ? null : value;
  };
  const bytes = () => {
    const n = buf.readUInt32LE(at);
    const value = buf.subarray(at + 4, at + 4 + n);
    if (value.length !== n) throw new Error('history batch: truncated');
    at += 4 + n;
    return value;
  };
  const string = () => bytes().toString('utf8');
  const kind = () => String.fromCharCode(buf[at++]!);
  while (at < buf.length) {
    const tag = buf[at++];
    if (tag === SUBJECT) {
      account = string();
      key = bytes();
      continue;
    }
    if (tag! > VELOCITY) throw new Error(`history batch: unknown row tag ${tag}`);
    if (account === null || key === null) throw new Error('history batch: a row before its subject');
    switch (tag) {
      case KEY: {
        const first = number(), last = number();
        const country = buf[at++] === 1 ? string() : null;
        write.keys.push([account, key, first, last, country, number(), number(), number(), number(), number()]);
        break;
      }
      case COUNT:
        write.counts.push([account, key, number(), number(), number(), number()]);
        break;
      case MEMBER: {
        const k = kind();
        write.members.push([account, key, k, bytes(), number()]);
        break;
      }
      case EVICTED: {
        const k = kind();
        write.evicted.push([account, key, k, bytes()]);
        break;
      }
      case VELOCITY: {
        const series = string();
        write.velocity.push([account, key, series, number(), number(), number()]);
        break;
      }
      default:
        throw new Error(`history batch: unknown row tag ${tag}`);
    }
  }
  return write;
}

/** A HistoryWrite's rows as a batch (benchmarks and tests build rows; the history builds batches directly). */
export function encodeHistoryWrite(write: HistoryWrite): Uint8Array {
  const encoder = new HistoryBatchEncoder();
  let subject: string | null = null;
  const about = (account: unknown, key: unknown) => {
    const id = `${account as string}\u0000${Buffer.from(key as Uint8Array).toString('hex')}`;
    if (id === subject) return;
    subject = id;
    encoder.subject(account as string, key as Uint8Array);
  };
  const n = (value: unknown) => value as number | null;
  for (const [account, key, first, last, country, latitude, longitude, radiusKm, asn, anonymous] of write.keys) {
    about(account, key);
    encoder.key({ firstSeen: first as number, lastSeen: last as number, country: country as string | null, latitude: n(latitude), longitude: n(longitude), radiusKm: n(radiusKm), asn: n(asn), anonymous: n(anonymous) });
  }
  for (const [account, key, grain, bucket, count, at] of write.counts) {
    about(account, key);
    encoder.count(grain as number, bucket as number, count as number, at as number);
  }
  for (const [account, key, kind, member] of write.evicted) {
    about(account, key);
    encoder.evicted(kind as string, member as Uint8Array);
  }
  for (const [account, key, kind, member, seen] of write.members) {
    about(account, key);
    encoder.member(kind as string, member as Uint8Array, seen as number);
  }
  for (const [account, key, series, bucket, count, expires] of write.velocity) {
    about(account, key);
    encoder.velocity(series as string, bucket as number, count as number, expires as number);
  }
  return encoder.finish();
}
