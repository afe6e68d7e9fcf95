import { ipv4ToNumber, ipv6ToWords } from '../ip/numeric.js';

import type { LogRecord } from '../core/log-record.js';

/** Column order of `LOG_COLUMNS`, shared by both engines' writers. */
export const LOG_COLUMNS = [
  'id', 'account_id', 'evaluated_at', 'event_type', 'email', 'email_domain', 'ip_key', 'user_id', 'device_hash',
  'state', 'fraud_score', 'rule_set_version', 'request', 'response', 'shadow',
] as const;

export function logColumns(r: LogRecord): unknown[] {
  return [
    r.id, r.account_id, timeOfId(r.id), r.event_type, r.email.toLowerCase(), r.email_domain, ipKey(r.ip), r.user_id, r.device_hash,
    r.state, r.fraud_score, r.rule_set_version, r.request, r.response, r.shadow,
  ];
}

/** Bytes a queued record holds, for the queue's byte bound (strings are UTF-16 in memory; this counts characters). */
export function recordSize(r: LogRecord): number {
  let size = r.request.length + r.response.length + (r.shadow?.length ?? 0) + r.email.length + 200;
  for (const rule of r.fired) size += rule.length + 16;
  return size;
}

/** The Unix milliseconds a UUIDv7 carries in its first 48 bits (RFC 9562 §5.7). */
export function timeOfId(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** The smallest UUIDv7 text of millisecond `ms`: every id made at or after `ms` sorts at or after it. */
export function firstIdAt(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/** 32 hex digits, IPv4 as IPv4-mapped IPv6: one order for both families, so a CIDR is a key range. */
export function ipKey(address: string): string {
  if (!address.includes(':')) return `00000000000000000000ffff${ipv4ToNumber(address).toString(16).padStart(8, '0')}`;
  let key = '';
  for (const word of ipv6ToWords(address)) key += word.toString(16).padStart(8, '0');
  return key;
}
