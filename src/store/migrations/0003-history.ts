import { sql } from 'kysely';
import { types, type Migration } from './types.js';

/**
 * Behaviour history (PRODUCT.md "Behaviour"): cells that only ever add up, so two replicas
 * recording at once never lose each other's events, and so one statement can record an event and
 * read what came before it. Every identifier is a 16-byte keyed hash (src/history/identifiers.ts);
 * nothing readable about a person is kept here.
 *
 * - `history_keys`: one row per identifier (IP, e-mail, device, user): first and last seen, and for
 *   a user the place of the last event (for impossible travel).
 * - `history_counts`: events per identifier per minute (grain 1) or per hour (grain 2), spread
 *   over a few shards on PostgreSQL so that replicas counting one busy address do not all wait
 *   for one row's lock (a read sums the shards; SQLite, with one writer, uses shard 0).
 * - `history_members`: bounded sets per identifier: the accounts behind an IP or a device (`a`),
 *   the devices of an e-mail or a user (`d`), a user's countries (`c`). Each keeps its CAP + 1 most
 *   recent members (src/history/caps.ts), so a set's cost never grows with its history.
 *
 * No foreign key to accounts, as for the evaluation log: written on every evaluation, pruned by age.
 */
export const behaviourHistory: Migration = {
  version: 3,
  name: 'behaviour history',
  async up(db, engine) {
    const { time } = types(engine);
    const hash = engine === 'postgres' ? 'bytea' : 'blob';
    await db.schema.createTable('history_keys')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('key', hash, (c) => c.notNull())
      .addColumn('first_seen', time, (c) => c.notNull())
      .addColumn('last_seen', time, (c) => c.notNull())
      .addColumn('country', 'text')
      .addColumn('latitude', 'real')
      .addColumn('longitude', 'real')
      .addColumn('radius_km', 'real')
      .addColumn('asn', 'bigint')
      .addColumn('anonymous', 'integer')
      .addPrimaryKeyConstraint('history_keys_pk', ['account_id', 'key'])
      .execute();
    await db.schema.createIndex('history_keys_last_seen').on('history_keys').columns(['last_seen']).execute();

    await db.schema.createTable('history_counts')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('key', hash, (c) => c.notNull())
      .addColumn('grain', 'integer', (c) => c.notNull())
      .addColumn('bucket', 'integer', (c) => c.notNull())
      .addColumn('shard', 'integer', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('history_counts_pk', ['account_id', 'key', 'grain', 'bucket', 'shard'])
      .execute();
    // Pruning by age: hour buckets outlive minute buckets, so the two grains prune separately.
    await db.schema.createIndex('history_counts_age').on('history_counts').columns(['grain', 'bucket']).execute();

    await db.schema.createTable('history_members')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('key', hash, (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('a', 'd', 'c')`))
      .addColumn('member', hash, (c) => c.notNull())
      .addColumn('last_seen', time, (c) => c.notNull())
      .addPrimaryKeyConstraint('history_members_pk', ['account_id', 'key', 'kind', 'member'])
      .execute();
    // Counting a set's recent members reads at most CAP + 1 entries of this index, newest first.
    await db.schema.createIndex('history_members_recent').on('history_members').columns(['account_id', 'key', 'kind', 'last_seen']).execute();
    // Erasure finds a person among the accounts behind IPs and devices.
    await db.schema.createIndex('history_members_identity').on('history_members').columns(['account_id', 'member'])
      .where(sql.ref('kind'), '=', 'a').execute();
    await db.schema.createIndex('history_members_age').on('history_members').columns(['last_seen']).execute();
  },
};
