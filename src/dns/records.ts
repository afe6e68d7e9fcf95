import type { Answer, RecordType } from './message.js';
import { canonicalName } from './message.js';

/**
 * What the resolver keeps of an answer. A domain's owner writes its answers, so nothing about
 * them may be attacker-sized: one 64 KB TCP reply can carry some 3,000 MX records of 245-character
 * names (by name compression), which decode to about a megabyte. A reply is read up to
 * `MAX_RECORDS_READ` records (message.ts); an answer keeps at most `MAX_RECORDS_PER_ANSWER` of
 * them, each small, in the shape its users need, frozen and shared.
 */

/** One mail exchange in the shape the response's `mx_records` carries, so it is shared, never copied. */
export interface MailExchange {
  readonly exchange: string;
  readonly priority: number;
}

/** What is kept of one record of each type: MX its exchange and preference, A/AAAA the address. */
export interface RecordData {
  MX: MailExchange;
  A: string;
  AAAA: string;
}

/**
 * At most this many records per answer. MX: the most preferred of those read (lowest preference,
 * then by name); twice the five addresses Postfix and Exim try per delivery by default, and more
 * than any provider publishes. A/AAAA: deliverability only asks whether there is one.
 */
export const MAX_RECORDS_PER_ANSWER = 10;

/** Longest name in presentation form: 255 octets on the wire (RFC 1035 §2.3.4). */
export const MAX_NAME_LENGTH = 253;

/** The null MX's exchange (RFC 7505), written "." in answers and in `mx_records`. */
export const NULL_MX = '.';

/**
 * The records of `type` in an answer, as kept: names lower-cased without the root dot, one record
 * per exchange (an RRset has no duplicates, RFC 2181 §5), MX sorted most preferred first, at most
 * `MAX_RECORDS_PER_ANSWER`. A name over `MAX_NAME_LENGTH` is dropped (dns-packet refuses longer
 * ones already; this does not depend on it).
 */
export function keepRecords<T extends RecordType>(type: T, answers: readonly Answer[]): ReadonlyArray<RecordData[T]> {
  if (type !== 'MX') {
    const addresses: string[] = [];
    for (const a of answers) {
      if ((a.type === 'A' || a.type === 'AAAA') && addresses.length < MAX_RECORDS_PER_ANSWER) addresses.push(a.data);
    }
    return Object.freeze(addresses) as ReadonlyArray<RecordData[T]>;
  }
  const all: MailExchange[] = [];
  for (const a of answers) {
    if (a.type !== 'MX') continue;
    const exchange = exchangeName(a.data.exchange);
    if (exchange.length <= MAX_NAME_LENGTH) all.push({ exchange, priority: a.data.preference ?? 0 });
  }
  all.sort((x, y) => x.priority - y.priority || (x.exchange < y.exchange ? -1 : x.exchange > y.exchange ? 1 : 0));
  const kept: MailExchange[] = [];
  const seen = new Set<string>();
  for (const mx of all) {
    if (kept.length === MAX_RECORDS_PER_ANSWER) break;
    if (seen.has(mx.exchange)) continue;
    seen.add(mx.exchange);
    kept.push(Object.freeze(mx));
  }
  return Object.freeze(kept) as ReadonlyArray<RecordData[T]>;
}

/** The root, written "" or "." on the wire, is the null MX's exchange. */
function exchangeName(name: string): string {
  return name === '' || name === '.' ? NULL_MX : canonicalName(name);
}

/**
 * Estimated heap bytes, for the caches' byte bounds. Upper bounds for 64-bit V8 without pointer
 * compression (Node's build), checked by `npx tsx bench/email.ts`, which fills a cache with short
 * and with longest names and compares the heap it measures with this estimate:
 * a string 24 bytes plus 2 per character (as if two-byte, which a name with bytes above 0x7f
 * becomes), a kept record 56 bytes plus its name, an array slot 8.
 */
export function stringBytes(text: string): number {
  return 24 + 2 * text.length;
}

export function recordsBytes(records: ReadonlyArray<MailExchange | string>): number {
  let bytes = 32;
  for (const r of records) bytes += 8 + (typeof r === 'string' ? stringBytes(r) : 56 + stringBytes(r.exchange));
  return bytes;
}
