import { ipv4ToNumber, ipv6ToWords } from '../ip/numeric.js';

/**
 * One evaluation as the request path hands it to the log: references to values it already has,
 * and the request and response already serialised (the response is the string that was sent, so
 * logging costs no second JSON.stringify of it). Derived columns are computed by the writer, off
 * the request path.
 */
export interface LogRecord {
  id: string;
  account_id: string;
  event_type: string;
  /** Normalised address (lower-cased by the writer). */
  email: string;
  email_domain: string;
  /** Canonical text of the address (IPv4-mapped IPv6 already read as IPv4). */
  ip: string;
  user_id: string | null;
  device_hash: string | null;
  state: string;
  fraud_score: number;
  rule_set_version: number | null;
  /** Ids of the rules that fired, live and dry-run: one row each in `evaluation_rules`. */
  fired: string[];
  request: string;
  response: string;
  /** The shadow rule set's outcome as JSON (ShadowOutcome); null when none ran. */
  shadow: string | null;
}

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
