import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * SQLite's behaviour history in one b-tree per key (issue 24). A new person is 3 identifier rows,
 * 2 counters and 5 set members; in three tables whose keys begin with a random 16-byte hash, each
 * row dirtied its own leaf page, and the writer thread's CPU per new person was those pages
 * (bench/history-layout.ts: 13.6 WAL frames per person on a grown store). `history_cells` holds
 * everything under an (account, key) side by side, so a key's rows share a leaf (8.5 frames), and
 * the reader loads a key with one statement (one range of the primary key) instead of three.
 *
 * A row's `kind` says what it is, `sub` which one of them:
 * - `k`: the identifier itself (sub 0): first and last seen, and for a user the place of the last event;
 * - `m` / `h`: events in a minute / an hour (sub: the bucket, minutes or hours since the epoch), in
 *   `n`; `last_seen` a time within the bucket (the latest event of the key when written back, or
 *   the bucket's start for a row copied here), which is what pruning finds it by;
 * - `a` / `d` / `c`: a set member (sub: the member), seen last at `last_seen`.
 *
 * A rowid table, not WITHOUT ROWID: every index entry then ends with the rowid, which grows, so the
 * age index's entries of one time are appended, not placed by a random hash, and entries are
 * smaller. bench/history-layout.ts at 200,000 people, batches of 50: three tables 13.6 WAL frames
 * per person, WITHOUT ROWID 9.3, rowid 8.8; writer CPU per person 615 / 523, 550 / 480, 474 / 395 µs.
 * (The rows of a key then sit on the table's pages of the write-backs that wrote them: a read of a
 * known key fetches them by rowid, as the three tables' reads did.) Indexes, each for one job:
 * - `history_cells_identity` (account, member) of the accounts sets only: erasure finds a person
 *   among the accounts behind IPs and devices (as `history_members_identity` did);
 * - `history_cells_age` (kind, last_seen): pruning, identifiers and set members past HISTORY_DAYS,
 *   counters no window reads. Within a kind its entries are appended at the newest end, as times
 *   mostly come in order: cheap to write. (An index on a counter's bucket was not, in the first
 *   cut, WITHOUT ROWID: entries of one bucket were ordered by the rest of the primary key, a random
 *   hash, and bench/history-layout.ts counted 2 more pages written per new person.)
 *
 * Velocity counters stay in `history_velocity` (migration 12): they are read only when a counter
 * needs them (lazily, unlike a key's other rows), and many are under keys of their own (a device,
 * an IP) with several series each; joining them would grow every key's range read for nothing.
 *
 * The copy is the migration's cost: ~23 s (CPU) for 200,000 people, 1.8 million rows (README "Store",
 * "Upgrading").
 *
 * PostgreSQL keeps its three tables: its statement reads and adds to them with one round trip, and
 * its counters are spread over shards that several replicas add to at once.
 */
export const historyByKey: Migration = {
  version: 17,
  name: 'SQLite history in one table by key',
  async up(db, engine) {
    if (engine !== 'sqlite') return;
    await sql`create table history_cells (
      account_id text not null,
      key blob not null,
      kind text not null check (kind in ('k', 'm', 'h', 'a', 'd', 'c')),
      sub blob not null,
      n integer,
      first_seen integer,
      last_seen integer,
      country text,
      latitude real,
      longitude real,
      radius_km real,
      asn integer,
      anonymous integer,
      primary key (account_id, key, kind, sub)
    )`.execute(db);
    await sql`insert into history_cells (account_id, key, kind, sub, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous)
      select account_id, key, 'k', 0, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous from history_keys`.execute(db);
    await sql`insert into history_cells (account_id, key, kind, sub, n, last_seen)
      select account_id, key, case grain when 1 then 'm' else 'h' end, bucket, sum(n), bucket * case grain when 1 then 60000 else 3600000 end
      from history_counts group by account_id, key, grain, bucket`.execute(db);
    await sql`insert into history_cells (account_id, key, kind, sub, last_seen)
      select account_id, key, kind, member, last_seen from history_members`.execute(db);
    for (const table of ['history_keys', 'history_counts', 'history_members']) await db.schema.dropTable(table).execute();
    await sql`create index history_cells_identity on history_cells (account_id, sub) where kind = 'a'`.execute(db);
    await sql`create index history_cells_age on history_cells (kind, last_seen)`.execute(db);
  },
};
