import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * Which rules fired in each logged evaluation, one row per rule (live and dry-run), so "the
 * decisions rule X fired on" is an index range like the log's other searches: by account and rule,
 * newest first (the evaluation id sorts by time). Written by the log writer in the batch of the
 * evaluation itself; removed with it (pruned, erased) by the foreign key's cascade, whoever deletes.
 * Evaluations logged before this migration have no rows here: the filter does not find them.
 */
export const firedRules: Migration = {
  version: 6,
  name: 'rules fired per evaluation',
  async up(db, engine) {
    let table = db.schema.createTable('evaluation_rules')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('rule_id', 'text', (c) => c.notNull())
      .addColumn('evaluation_id', engine === 'postgres' ? 'uuid' : 'text', (c) => c.notNull().references('evaluations.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('evaluation_rules_pk', ['account_id', 'rule_id', 'evaluation_id']);
    // The key is the only index a search needs: no rowid b-tree beside it.
    if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
    await table.execute();
    // For the cascade: deleting an evaluation finds its rows without a scan.
    await db.schema.createIndex('evaluation_rules_evaluation').on('evaluation_rules').columns(['evaluation_id']).execute();
  },
};
