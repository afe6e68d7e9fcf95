import type { Migration } from './types.js';

/**
 * Velocity counters (issue 28, src/history/velocity.ts): events per keyed hash, counter series and
 * bucket, written with behaviour history in the same step and as it is (summed cells; spread over a
 * few shards on PostgreSQL; SQLite writes shard 0). A cell carries the minute from which no window
 * reads it, so pruning needs no knowledge of the rule files. The key is the same 16-byte HMAC as
 * history's identifiers: an e-mail, user or device counter sits under the person's own key and is
 * erased with it.
 */
export const velocityCounters: Migration = {
  version: 12,
  name: 'velocity counters',
  async up(db, engine) {
    const hash = engine === 'postgres' ? 'bytea' : 'blob';
    await db.schema.createTable('history_velocity')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('key', hash, (c) => c.notNull())
      .addColumn('series', 'text', (c) => c.notNull())
      .addColumn('bucket', 'integer', (c) => c.notNull())
      .addColumn('shard', 'integer', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addColumn('expires', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('history_velocity_pk', ['account_id', 'key', 'series', 'bucket', 'shard'])
      .execute();
    await db.schema.createIndex('history_velocity_expires').on('history_velocity').columns(['expires']).execute();
  },
};
