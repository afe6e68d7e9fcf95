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

/**
 * Erasing a person from the SQLite log (named parameters :account, :user, :email; a null one matches
 * nothing). Their evaluations are found through the user and e-mail indexes, one range each: the
 * condition `user_id = ? or email = ?` uses neither (SQLite's plan reads every row of the account, a
 * page each, in the writer thread, while the log and history writes wait behind it).
 */
const PERSON_IDS = `select id from evaluations where account_id = :account and user_id = :user
  union all select id from evaluations where account_id = :account and email = :email`;
export const SQLITE_LOG_ERASE = {
  labels: `delete from labels where account_id = :account and evaluation_id in (${PERSON_IDS})`,
  reviews: `delete from review_items where account_id = :account and evaluation_id in (${PERSON_IDS})`,
  evaluations: `delete from evaluations where account_id = :account and id in (${PERSON_IDS})`,
} as const;

/** Bytes a queued record holds, for the queue's byte bound (strings are UTF-16 in memory; this counts characters). */
export function recordSize(r: LogRecord): number {
  let size = r.request.length + r.response.length + (r.shadow?.length ?? 0) + r.email.length + 200;
  for (const rule of r.fired) size += rule.length + 16;
  for (const rule of r.unknown ?? []) size += rule.length + 16;
  return size;
}

const HOUR_MS = 3_600_000;

/** The first millisecond of the hour `ms` is in. */
export const hourOf = (ms: number) => ms - (ms % HOUR_MS);

/** [account, event type, hour, evaluations] */
export type EvaluationHourCount = [string, string, number, number];
/** [account, event type, hour, rule, fired, unknown] */
export type RuleHourCount = [string, string, number, string, number, number];

/**
 * A batch's hourly counts (migration 13), summed so each row is one upsert, and sorted, so two
 * replicas' batches lock the rows they share in the same order (no deadlock).
 */
export function hourlyCounts(records: LogRecord[]): { evaluations: EvaluationHourCount[]; rules: RuleHourCount[] } {
  const evaluations = new Map<string, EvaluationHourCount>();
  const rules = new Map<string, RuleHourCount>();
  const count = (record: LogRecord, hour: number, rule: string, column: 4 | 5) => {
    const key = `${record.account_id}\u0000${record.event_type}\u0000${hour}\u0000${rule}`;
    const row = rules.get(key) ?? [record.account_id, record.event_type, hour, rule, 0, 0];
    row[column]++;
    rules.set(key, row);
  };
  for (const record of records) {
    const hour = hourOf(timeOfId(record.id));
    const key = `${record.account_id}\u0000${record.event_type}\u0000${hour}`;
    const row = evaluations.get(key) ?? [record.account_id, record.event_type, hour, 0];
    row[3]++;
    evaluations.set(key, row);
    for (const rule of record.fired) count(record, hour, rule, 4);
    for (const rule of record.unknown ?? []) count(record, hour, rule, 5);
  }
  const sorted = <T extends unknown[]>(rows: Map<string, T>) => [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  return { evaluations: sorted(evaluations), rules: sorted(rules) };
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
