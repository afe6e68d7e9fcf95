import { BatchReader, BatchWriter } from './batch-codec.js';
import type { HistoryWrite } from './sqlite-log-worker.js';

/**
 * A SQLite history write-back as one binary batch (batch-codec.ts), built on the main thread and
 * transferred to the writer thread, which decodes it into the rows its statements bind
 * (HistoryWrite). As nested arrays of small values and Buffers, the batch's structured clone was
 * the largest single cost memory added to the main thread in a profile of the new-person mix
 * (`postMessage` ~2 % of it, the rows built for it ~1 %); built and sent, 8.6–9.1 µs a new person
 * as rows against 4.4 as this batch (bench/hand-over.ts).
 *
 * Rows, each a tag then its fields, in the order they were added: `subject` (account, key) comes
 * before the rows of that identifier; a set kind is one byte (its one ASCII character: `a`, `c`,
 * `d`). No count or length is written: a transfer moves the whole buffer, and a batch cut
 * inside a row is refused by the reader.
 */
const SUBJECT = 0;
const KEY = 1;
const COUNT = 2;
const MEMBER = 3;
const EVICTED = 4;
const VELOCITY = 5;
/**
 * A subject whose own rows the file does not hold (the main thread's key filter said "not there"
 * when it was first met): the writer inserts it without a read, and merges should a reverse entry
 * written by an earlier write-back be there (history-packed.ts `save`).
 */
const FRESH_SUBJECT = 6;

/** An identifier row's columns: first and last seen, and its last place (anonymous as 1/0). */
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
  private readonly out: BatchWriter;

  /** `size`: a first guess of the bytes the batch takes (it grows as needed). */
  constructor(size?: number) {
    this.out = new BatchWriter(size);
  }

  /**
   * The identifier the rows after it are of; `fresh`: never in the file (its first write-back):
   * the writer thread inserts its row without reading for it first.
   */
  subject(account: string, key: Uint8Array | string, fresh = false): void {
    this.out.u8(fresh ? FRESH_SUBJECT : SUBJECT);
    this.out.string(account);
    this.out.bytes(key);
  }

  key(row: KeyColumns): void {
    const { out } = this;
    out.u8(KEY);
    out.number(row.firstSeen);
    out.number(row.lastSeen);
    out.nullableString(row.country);
    out.number(row.latitude);
    out.number(row.longitude);
    out.number(row.radiusKm);
    out.number(row.asn);
    out.number(row.anonymous);
  }

  /** A counter's absolute count; `at` a time within its bucket (pruning's). */
  count(grain: number, bucket: number, n: number, at: number): void {
    const { out } = this;
    out.u8(COUNT);
    out.number(grain);
    out.number(bucket);
    out.number(n);
    out.number(at);
  }

  /** A set member (as bytes, or as text of one character a byte). */
  member(kind: string, member: Uint8Array | string, lastSeen: number): void {
    this.out.u8(MEMBER);
    this.out.u8(kind.charCodeAt(0));
    this.out.bytes(member);
    this.out.number(lastSeen);
  }

  /** A member the set no longer keeps. */
  evicted(kind: string, member: Uint8Array | string): void {
    this.out.u8(EVICTED);
    this.out.u8(kind.charCodeAt(0));
    this.out.bytes(member);
  }

  velocity(series: string, bucket: number, n: number, expires: number): void {
    const { out } = this;
    out.u8(VELOCITY);
    out.string(series);
    out.number(bucket);
    out.number(n);
    out.number(expires);
  }

  /** The batch, to transfer (`.buffer`); the encoder is not used after. */
  finish(): Uint8Array {
    return this.out.finish();
  }
}

/**
 * The writer thread's side: the batch's rows as its statements bind them, in the order each kind
 * was added. Blobs are views of the batch (no copy).
 */
export function decodeHistoryBatch(batch: Uint8Array): HistoryWrite {
  const r = new BatchReader(batch);
  const write: HistoryWrite = { fresh: [], keys: [], counts: [], members: [], evicted: [], velocity: [] };
  let account: string | null = null;
  let key: Buffer | null = null;
  const kind = () => String.fromCharCode(r.u8());
  while (!r.done) {
    const tag = r.u8();
    if (tag === SUBJECT || tag === FRESH_SUBJECT) {
      account = r.string();
      key = r.bytes();
      if (tag === FRESH_SUBJECT) write.fresh!.push([account, key]);
      continue;
    }
    if (tag > VELOCITY) throw new Error(`history batch: unknown row tag ${tag}`);
    if (account === null || key === null) throw new Error('history batch: a row before its subject');
    switch (tag) {
      case KEY: {
        const first = r.number(), last = r.number(), country = r.nullableString();
        write.keys.push([account, key, first, last, country, r.number(), r.number(), r.number(), r.number(), r.number()]);
        break;
      }
      case COUNT:
        write.counts.push([account, key, r.number(), r.number(), r.number(), r.number()]);
        break;
      case MEMBER: {
        const k = kind();
        write.members.push([account, key, k, r.bytes(), r.number()]);
        break;
      }
      case EVICTED: {
        const k = kind();
        write.evicted.push([account, key, k, r.bytes()]);
        break;
      }
      default: {
        const series = r.string();
        write.velocity.push([account, key, series, r.number(), r.number(), r.number()]);
      }
    }
  }
  return write;
}
