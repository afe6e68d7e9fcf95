import { sql } from 'kysely';
import { numberToIpv4, parseNetwork } from '../ip/numeric.js';
import type { StoredVersion } from '../rules/compiled-versions.js';
import type { Engine } from './engine.js';
import { fromJson } from './json.js';
import { firstIdAt } from './log-record.js';
import type { Label, LabelRow } from './schema.js';

/**
 * The evaluation log read back (issue 14, "decisions"): one account's evaluations searched by the
 * columns the log writes, newest first, a page at a time; one evaluation in full. Every search is an
 * index range of migration 0002 (account, column, id), of `evaluation_rules`' key (account, rule,
 * id) or of the labels' (0007: account, label, id); the page is the next `limit` ids below the
 * cursor, so pages never overlap or skip, whatever
 * is written meanwhile. A time range is an id range too: a UUIDv7 starts with its millisecond.
 */
export interface DecisionFilter {
  /** Milliseconds: evaluated at or after. */
  from?: number;
  /** Milliseconds: evaluated before. */
  to?: number;
  state?: string;
  eventType?: string;
  /** The normalised address, lower-cased, as the log stores it. */
  email?: string;
  domain?: string;
  /** Inclusive range of `ip_key`s (one address: start = end). */
  ipKeys?: { start: string; end: string };
  userId?: string;
  deviceHash?: string;
  /** A rule id that fired (live or dry-run). */
  rule?: string;
  label?: Label | 'none';
}

export interface DecisionSummary {
  id: string;
  evaluated_at: number;
  event_type: string;
  state: string;
  fraud_score: number;
  email: string;
  ip: string;
  user_id: string | null;
  device_hash: string | null;
  /** Ids of the rules that fired, live and dry-run, sorted. */
  rules: string[];
  label: Label | null;
}

export interface DecisionRecord extends DecisionSummary {
  account_id: string;
  email_domain: string;
  rule_set_version: number | null;
  request: unknown;
  response: unknown;
  /** The shadow rule set's outcome (ShadowOutcome), when one ran. */
  shadow: unknown;
  labelled: LabelRow | null;
  /** The same user's evaluation just before this one, when the request named a user. */
  previous_of_user: string | null;
}

export const MAX_PAGE = 200;

export class Decisions {
  constructor(private readonly engine: Engine) {}

  /** Up to `limit` summaries with ids below `beforeId`, newest first. */
  async search(account: string, filter: DecisionFilter, page: { beforeId?: string; limit: number }): Promise<DecisionSummary[]> {
    const { id, query: filtered } = this.filtered(account, filter);
    let query = filtered.select(['e.id', 'e.evaluated_at', 'e.event_type', 'e.state', 'e.fraud_score', 'e.email', 'e.ip_key', 'e.user_id', 'e.device_hash', 'l.label']);
    if (page.beforeId !== undefined) query = query.where(id, '<', page.beforeId);
    const rows = await query.orderBy(id, 'desc').limit(Math.min(page.limit, MAX_PAGE)).execute();
    const fired = await this.firedRules(account, rows.map((r) => r.id));
    return rows.map((r) => ({
      id: r.id, evaluated_at: Number(r.evaluated_at), event_type: r.event_type, state: r.state, fraud_score: r.fraud_score,
      email: r.email, ip: addressOfKey(r.ip_key), user_id: r.user_id, device_hash: r.device_hash,
      rules: fired.get(r.id) ?? [], label: r.label ?? null,
    }));
  }

  /**
   * How many evaluations the filter matches, per state, in each bucket of `bucketMs` milliseconds
   * (buckets start at multiples of it from the epoch; empty ones are left out), oldest first. The
   * same index range as the search, read to its end: the caller bounds the range.
   */
  async countByState(account: string, filter: DecisionFilter, bucketMs: number): Promise<Array<{ start: number; state: string; count: number }>> {
    const { query } = this.filtered(account, filter);
    const bucket = sql<number>`${sql.ref('e.evaluated_at')} / ${sql.lit(bucketMs)}`;
    const rows = await query.select([bucket.as('bucket'), 'e.state', (eb) => eb.fn.countAll<number>().as('count')])
      .groupBy([bucket, 'e.state']).orderBy(bucket).execute();
    return rows.map((r) => ({ start: Math.floor(Number(r.bucket)) * bucketMs, state: r.state, count: Number(r.count) }));
  }

  /** The account's evaluations the filter matches, joined to their labels; `id` is the column the page's order and ranges use. */
  private filtered(account: string, filter: DecisionFilter) {
    const db = this.engine.db;
    const byRule = filter.rule !== undefined;
    const labelled = filter.label === 'fraud' || filter.label === 'legit';
    // Driven by the index that holds the fewest rows in order: the fired rules' key for a rule, the
    // labels' for a label, else the log's own. Ids are equal across the join, so the driver's order is the page's.
    const id = sql.ref<string>(byRule ? 'r.evaluation_id' : labelled ? 'l.evaluation_id' : 'e.id');
    const evaluations = db.selectFrom('evaluations as e');
    const withLabels = evaluations.leftJoin('labels as l', (join) => join.onRef('l.account_id', '=', 'e.account_id').onRef('l.evaluation_id', '=', 'e.id'));
    // An inner join when a label is asked for, so the labels can lead (a left join fixes the order on SQLite); the same columns either way.
    let query = (labelled
      ? evaluations.innerJoin('labels as l', (join) => join.onRef('l.evaluation_id', '=', 'e.id')).where('l.account_id', '=', account).where('l.label', '=', filter.label as Label) as unknown as typeof withLabels
      : withLabels)
      .$if(byRule, (q) => q.innerJoin('evaluation_rules as r', (join) => join.onRef('r.evaluation_id', '=', 'e.id'))
        .where('r.account_id', '=', account).where('r.rule_id', '=', filter.rule!))
      .where('e.account_id', '=', account);
    if (filter.from !== undefined) query = query.where(id, '>=', firstIdAt(filter.from));
    if (filter.to !== undefined) query = query.where(id, '<', firstIdAt(filter.to));
    if (filter.state !== undefined) query = query.where('e.state', '=', filter.state);
    if (filter.eventType !== undefined) query = query.where('e.event_type', '=', filter.eventType);
    if (filter.email !== undefined) query = query.where('e.email', '=', filter.email);
    if (filter.domain !== undefined) query = query.where('e.email_domain', '=', filter.domain);
    if (filter.ipKeys !== undefined) {
      const { start, end } = filter.ipKeys;
      query = start === end ? query.where('e.ip_key', '=', start) : query.where('e.ip_key', '>=', start).where('e.ip_key', '<=', end);
    }
    if (filter.userId !== undefined) query = query.where('e.user_id', '=', filter.userId);
    if (filter.deviceHash !== undefined) query = query.where('e.device_hash', '=', filter.deviceHash);
    if (filter.label === 'none') query = query.where('l.label', 'is', null);
    return { id, query };
  }

  /** One evaluation of the account, whole; undefined when the log holds no such evaluation of this account. */
  async get(account: string, evaluationId: string): Promise<DecisionRecord | undefined> {
    const db = this.engine.db;
    const row = await db.selectFrom('evaluations').selectAll().where('account_id', '=', account).where('id', '=', evaluationId).executeTakeFirst();
    if (!row) return undefined;
    const [labelled, fired, previous] = await Promise.all([
      db.selectFrom('labels').selectAll().where('account_id', '=', account).where('evaluation_id', '=', evaluationId).executeTakeFirst(),
      this.firedRules(account, [row.id]),
      row.user_id === null ? undefined : db.selectFrom('evaluations').select('id').where('account_id', '=', account).where('user_id', '=', row.user_id)
        .where('id', '<', row.id).orderBy('id', 'desc').limit(1).executeTakeFirst(),
    ]);
    return {
      id: row.id, account_id: row.account_id, evaluated_at: Number(row.evaluated_at), event_type: row.event_type, state: row.state, fraud_score: row.fraud_score,
      email: row.email, email_domain: row.email_domain, ip: addressOfKey(row.ip_key), user_id: row.user_id, device_hash: row.device_hash,
      rules: fired.get(row.id) ?? [], label: labelled?.label ?? null,
      rule_set_version: row.rule_set_version === null ? null : Number(row.rule_set_version),
      request: fromJson(row.request), response: fromJson(row.response), shadow: fromJson(row.shadow),
      labelled: labelled ? { ...labelled, created_at: Number(labelled.created_at) } : null,
      previous_of_user: previous?.id ?? null,
    };
  }

  /** A rule set version by its store-wide id (what the log records), with its text, for replay. */
  async ruleSetVersion(id: number): Promise<StoredVersion | undefined> {
    const row = await this.engine.db.selectFrom('rule_set_versions').select(['id', 'account_id', 'event_type', 'version', 'yaml']).where('id', '=', id).executeTakeFirst();
    return row && { ...row, id: Number(row.id) };
  }

  private async firedRules(account: string, ids: string[]): Promise<Map<string, string[]>> {
    const fired = new Map<string, string[]>();
    if (ids.length === 0) return fired;
    const rows = await this.engine.db.selectFrom('evaluation_rules').select(['evaluation_id', 'rule_id'])
      .where('account_id', '=', account).where('evaluation_id', 'in', ids).orderBy('rule_id').execute();
    for (const row of rows) fired.set(row.evaluation_id, [...(fired.get(row.evaluation_id) ?? []), row.rule_id]);
    return fired;
  }
}

const hex8 = (n: number) => n.toString(16).padStart(8, '0');
const V4_PREFIX = '00000000000000000000ffff';

/** An address or CIDR (`a.b.c.d`, `a.b.c.d/n`, `x::y`, `x::y/n`) as the inclusive range of log keys it covers; null when malformed. */
export function ipKeyRange(text: string): { start: string; end: string } | null {
  const range = parseNetwork(text);
  if (range === null) return null;
  if (range.version === 4) return { start: V4_PREFIX + hex8(range.start), end: V4_PREFIX + hex8(range.end) };
  return { start: Array.from(range.start, hex8).join(''), end: Array.from(range.end, hex8).join('') };
}

/** The address a log key holds, as canonical text (IPv4 dotted; IPv6 in RFC 5952 form). */
export function addressOfKey(key: string): string {
  if (key.startsWith(V4_PREFIX)) return numberToIpv4(parseInt(key.slice(24), 16));
  const groups = Array.from({ length: 8 }, (_, i) => parseInt(key.slice(i * 4, i * 4 + 4), 16));
  // The longest run of two or more zero groups becomes "::" (the first, when two are as long).
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const text = (part: number[]) => part.map((g) => g.toString(16)).join(':');
  return best.at < 0 ? text(groups) : `${text(groups.slice(0, best.at))}::${text(groups.slice(best.at + best.length))}`;
}
