import { sql } from 'kysely';
import { types, type Migration } from './types.js';

/**
 * Backtests (issue 16): one row per backtest started through the admin API, written when it starts
 * and again when it ends, so any replica answers for it. The candidate rule file is kept beside
 * its report: the result reads with what was tested. An account keeps its last BACKTESTS_KEPT
 * (src/backtest/records.ts); older rows go when a new one starts.
 */
export const backtests: Migration = {
  version: 8,
  name: 'backtests',
  async up(db, engine) {
    const { time, document } = types(engine);
    await db.schema.createTable('backtests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('running', 'done', 'failed', 'cancelled')`))
      .addColumn('since', time, (c) => c.notNull())
      .addColumn('until', time, (c) => c.notNull())
      .addColumn('yaml', 'text', (c) => c.notNull())
      .addColumn('rule_set_version', 'integer')
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('finished_at', time)
      .addColumn('progress', 'text', (c) => c.notNull())
      .addColumn('report', document)
      .addColumn('error', 'text')
      .execute();
    await db.schema.createIndex('backtests_account').on('backtests').columns(['account_id', 'event_type', 'created_at']).execute();
  },
};
