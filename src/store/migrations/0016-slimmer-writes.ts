import type { Migration } from './types.js';

/**
 * Less for the SQLite writer thread to keep up (issue 24). `history_members_recent` (account, key,
 * kind, last_seen) serves PostgreSQL's history read, which counts a set's recent members in SQL; the
 * SQLite history reads a key's members by its primary key and counts them in memory, so there the
 * index was only written: one more b-tree entry placed on every member a new person adds (about a
 * fifth of a new person's write-back CPU in bench/writer.ts). Kept on PostgreSQL.
 */
export const slimmerWrites: Migration = {
  version: 16,
  name: 'SQLite history members without the recent index',
  async up(db, engine) {
    if (engine === 'sqlite') await db.schema.dropIndex('history_members_recent').ifExists().execute();
  },
};
