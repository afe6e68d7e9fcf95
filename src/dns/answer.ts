import type { Answer, DecodedPacket, RecordType } from './message.js';
import { canonicalName, sameName } from './message.js';
import { keepRecords, type RecordData } from './records.js';

/** What a good reply says about a name, once CNAMEs inside it are followed. */
export type Outcome<T extends RecordType> =
  /** The records as kept (records.ts: capped, most preferred MX first); `ttl` is the lowest of the whole set. */
  | { kind: 'records'; records: ReadonlyArray<RecordData[T]>; ttl: number }
  | { kind: 'nxdomain'; ttl: number | null }
  | { kind: 'nodata'; ttl: number | null }
  /** The answer ends on a CNAME whose target the server did not include: ask again for the target. */
  | { kind: 'alias'; target: string; ttl: number };

/** Longest CNAME chain followed inside one reply or across queries (resolvers use 8 to 16). */
export const MAX_CNAME_HOPS = 8;

/**
 * Reads a NOERROR/NXDOMAIN reply: follows the CNAME chain from the question's name through the
 * answer section (RFC 1034 §3.6.2, §4.3.2) and keeps the records of the asked type at its end.
 * Records for other names are ignored: a resolver's answer section is not a place to learn
 * unrelated facts from (cache poisoning, RFC 5452 §6).
 */
export function readOutcome<T extends RecordType>(reply: DecodedPacket, name: string, type: T, rcode: string): Outcome<T> {
  const answers = reply.answers ?? [];
  let current = canonicalName(name);
  let ttl = Number.POSITIVE_INFINITY;
  const seen = new Set<string>([current]);
  for (let hop = 0; hop <= MAX_CNAME_HOPS; hop += 1) {
    const records = answers.filter((a) => a.type === type && sameName(a.name, current));
    if (records.length > 0) {
      for (const r of records) ttl = Math.min(ttl, ttlOf(r));
      return { kind: 'records', records: keepRecords(type, records), ttl };
    }
    const alias = answers.find((a) => a.type === 'CNAME' && sameName(a.name, current));
    if (alias === undefined || alias.type !== 'CNAME') break;
    ttl = Math.min(ttl, ttlOf(alias));
    const target = canonicalName(alias.data);
    if (seen.has(target)) break; // a loop: treat as the end of the chain
    seen.add(target);
    current = target;
  }
  const negativeTtl = soaMinimum(reply);
  if (rcode === 'NXDOMAIN') return { kind: 'nxdomain', ttl: negativeTtl };
  if (current !== canonicalName(name) && !answers.some((a) => a.type === 'CNAME' && sameName(a.name, current))) {
    // The chain moved to a target with nothing for it in this reply: a NODATA for the target only
    // if the server said so with an SOA; otherwise ask for the target itself.
    if (negativeTtl === null) return { kind: 'alias', target: current, ttl: Number.isFinite(ttl) ? ttl : 0 };
  }
  return { kind: 'nodata', ttl: negativeTtl };
}

function ttlOf(record: Answer): number {
  return 'ttl' in record && typeof record.ttl === 'number' ? record.ttl : 0;
}

/** Negative answers are cached for min(SOA TTL, SOA MINIMUM) (RFC 2308 §5); `null` without an SOA. */
function soaMinimum(reply: DecodedPacket): number | null {
  const soa = (reply.authorities ?? []).find((a) => a.type === 'SOA');
  if (soa === undefined || soa.type !== 'SOA') return null;
  return Math.min(ttlOf(soa), soa.data.minimum ?? 0);
}
