import type { Engine } from './engine.js';
import { hourOf } from './log-record.js';

/** How often each rule of an event type fired and was unknown, out of the evaluations logged, since an hour. */
export interface HitCounts {
  evaluations: number;
  rules: Map<string, { fired: number; unknown: number }>;
}

/**
 * Hit rates read from the hourly rollups the log writer keeps (migration 13): a window is a sum over
 * at most one row per hour (per rule), whatever the traffic, never a scan of the log.
 */
export class RuleHits {
  constructor(private readonly engine: Engine) {}

  /** Counts over the hours from the one `since` falls in up to now (the current hour so far included). */
  async since(account: string, eventType: string, since: number): Promise<HitCounts> {
    const from = hourOf(since);
    const [total, rows] = await Promise.all([
      this.engine.db.selectFrom('evaluation_hours').select((eb) => eb.fn.sum<number | string | null>('evaluations').as('n'))
        .where('account_id', '=', account).where('event_type', '=', eventType).where('hour', '>=', from).executeTakeFirst(),
      this.engine.db.selectFrom('rule_hours')
        .select((eb) => ['rule_id', eb.fn.sum<number | string>('fired').as('fired'), eb.fn.sum<number | string>('unknown').as('unknown')])
        .where('account_id', '=', account).where('event_type', '=', eventType).where('hour', '>=', from).groupBy('rule_id').execute(),
    ]);
    // PostgreSQL answers a sum of integers as a bigint, which the driver gives as text.
    return {
      evaluations: Number(total?.n ?? 0),
      rules: new Map(rows.map((r) => [r.rule_id, { fired: Number(r.fired), unknown: Number(r.unknown) }])),
    };
  }
}
