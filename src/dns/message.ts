import { randomInt } from 'node:crypto';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket } from 'dns-packet';

/** The record types the service looks up. */
export type RecordType = 'MX' | 'A' | 'AAAA';

/** What a query may ask: a record type, or NS for the liveness check on the root (see health.ts). */
export type QuestionType = RecordType | 'NS';

export interface Query {
  id: number;
  name: string;
  type: QuestionType;
  bytes: Buffer;
}

/**
 * EDNS0 payload size of the DNS Flag Day 2020 recommendation: large enough for MX sets, small
 * enough not to fragment; anything bigger comes back truncated and is fetched over TCP.
 */
const UDP_PAYLOAD_SIZE = 1232;

/**
 * A recursive query with a random ID from the CSPRNG (RFC 5452 §9.2: predictable IDs make
 * spoofed replies easy to land).
 */
export function buildQuery(name: string, type: QuestionType): Query {
  const id = randomInt(0, 65_536);
  const bytes = dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type, name, class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: UDP_PAYLOAD_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
  });
  return { id, name, type, bytes };
}

/**
 * Records read from one reply, across its answer, authority and additional sections in that
 * order. A real reply holds a few (the largest MX sets providers publish have about a dozen
 * records; for addresses, deliverability asks only whether there is one); a hostile one up to
 * some 3,000 (64 KB over TCP, by name compression), and decoding them all costs milliseconds of
 * event loop and a megabyte of garbage per reply.
 */
export const MAX_RECORDS_READ = 64;

/**
 * Bytes from the network are data, not code paths: a packet that does not decode is `null`.
 * Only the first `MAX_RECORDS_READ` records are read: dns-packet decodes each section by the
 * count in the header, so the counts are cut before it starts, in `bytes` itself (a reply is
 * read once; a copy would add 64 KB to what each hostile reply costs).
 */
export function decodeReply(bytes: Buffer): DecodedPacket | null {
  try {
    if (bytes.length >= HEADER_BYTES) capCounts(bytes);
    return dnsPacket.decode(bytes);
  } catch {
    return null;
  }
}

const HEADER_BYTES = 12;
/** ANCOUNT, NSCOUNT, ARCOUNT (RFC 1035 §4.1.1). */
const SECTION_COUNTS = [6, 8, 10];

function capCounts(bytes: Buffer): void {
  let budget = MAX_RECORDS_READ;
  let cut = false;
  for (const at of SECTION_COUNTS) {
    const count = bytes.readUInt16BE(at);
    // Sections follow one another: once one is cut short, those after it cannot be found.
    const keep: number = cut ? 0 : Math.min(count, budget);
    budget -= keep;
    cut ||= keep < count;
    if (keep < count) bytes.writeUInt16BE(keep, at);
  }
}

/** DNS names compare case-insensitively (RFC 1035 §2.3.3, RFC 4343) and without the root dot. */
export function sameName(a: string, b: string): boolean {
  return canonicalName(a) === canonicalName(b);
}

export function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * A reply is ours only if it is a response with our ID and echoes our one question exactly
 * (RFC 5452 §4.1-4.3); anything else is ignored as a stray or a spoofing attempt.
 */
export function answersQuery(reply: DecodedPacket, query: Query): boolean {
  if (reply.type !== 'response' || reply.id !== query.id) return false;
  const questions = reply.questions ?? [];
  if (questions.length !== 1) return false;
  const q = questions[0]!;
  return q.type === query.type && (q.class ?? 'IN') === 'IN' && sameName(q.name, query.name);
}

export type Rcode = 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED' | string;

/** dns-packet decodes the rcode but its types omit it. */
export function rcodeOf(reply: DecodedPacket): Rcode {
  return (reply as DecodedPacket & { rcode?: string }).rcode ?? 'NOERROR';
}

export type { Answer, DecodedPacket };
