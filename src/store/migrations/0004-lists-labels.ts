import { sql } from 'kysely';
import { types, type Migration } from './types.js';

/**
 * Lists and labels (PRODUCT.md "Lists, feedback and erasure"). List entries are an account's own
 * decisions, written by its analysts: kept as written (normalised), audited, served from memory.
 * A label is one per evaluation (the latest wins) and goes when its evaluation goes.
 */
export const listsAndLabels: Migration = {
  version: 4,
  name: 'lists and labels',
  async up(db, engine) {
    const { time } = types(engine);
    await db.schema.createTable('list_entries')
      .addColumn('id', engine === 'postgres' ? 'bigint' : 'integer', (c) => (engine === 'postgres' ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement()))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('list', 'text', (c) => c.notNull().check(sql`list in ('block', 'allow')`))
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('email', 'domain', 'ip', 'device', 'user')`))
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('author', 'text', (c) => c.notNull())
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('expires_at', time)
      .addUniqueConstraint('list_entries_value', ['account_id', 'list', 'kind', 'value'])
      .execute();

    await db.schema.createTable('labels')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('evaluation_id', engine === 'postgres' ? 'uuid' : 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull().check(sql`label in ('fraud', 'legit')`))
      .addColumn('reason', 'text')
      .addColumn('author', 'text', (c) => c.notNull())
      .addColumn('created_at', time, (c) => c.notNull())
      .addPrimaryKeyConstraint('labels_pk', ['account_id', 'evaluation_id'])
      .execute();
    // Pruned with the evaluation log: an evaluation id sorts by time.
    await db.schema.createIndex('labels_evaluation').on('labels').columns(['evaluation_id']).execute();
  },
};
