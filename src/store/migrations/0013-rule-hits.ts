import { types, type Migration } from './types.js';

/**
 * Hit rates of rules, rolled up by the hour as the log writer writes each batch (issue 28): per
 * account, event type and hour the evaluations logged, and per rule how often it fired (live or
 * dry-run) and how often its input was unknown. A rule card reads at most 24 × 7 rows per rule for
 * its 24-hour and 7-day rates instead of scanning the log. Counts only, nothing about a person:
 * erasing one leaves them; rows are pruned with the log's retention. Evaluations logged before this
 * migration are not counted.
 */
export const ruleHits: Migration = {
  version: 13,
  name: 'hourly rule hit counts',
  async up(db, engine) {
    const t = types(engine);
    await db.schema.createTable('evaluation_hours')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('hour', t.time, (c) => c.notNull())
      .addColumn('evaluations', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluation_hours_pk', ['account_id', 'event_type', 'hour'])
      .execute();
    await db.schema.createTable('rule_hours')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('hour', t.time, (c) => c.notNull())
      .addColumn('rule_id', 'text', (c) => c.notNull())
      .addColumn('fired', 'integer', (c) => c.notNull())
      .addColumn('unknown', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('rule_hours_pk', ['account_id', 'event_type', 'hour', 'rule_id'])
      .execute();
    // Pruning by age across accounts.
    await db.schema.createIndex('evaluation_hours_hour').on('evaluation_hours').columns(['hour']).execute();
    await db.schema.createIndex('rule_hours_hour').on('rule_hours').columns(['hour']).execute();
  },
};
