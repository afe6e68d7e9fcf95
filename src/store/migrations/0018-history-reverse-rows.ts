import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * Erasure finds a person among the accounts behind IPs and devices through rows under the person's
 * own key (issue 24), not through an index of members. `history_cells_identity` (account, member)
 * placed each new person's entries at a random 16-byte member: 2–3 random leaves per new person
 * (added to the address's and the device's accounts sets, one member trimmed from the address's),
 * on top of the leaves the person's own rows dirty. bench/writer.ts with the index dropped: write-back
 * 397 → 330.5 CPU µs per new person on a store grown to 170,000 people.
 *
 * A reverse row, kind `r`: under the person's key (the set's member), `sub` the key whose accounts
 * set holds them, `last_seen` the membership's. The writer thread writes it with each accounts-set
 * member it writes (src/store/sqlite-log-worker.ts), so it lands in the leaf the person's own rows
 * already dirty. A member trimmed from a full set keeps its reverse row (deleting it would be the
 * random leaf again): erasure then deletes a membership that is no longer there, and pruning takes
 * the row past HISTORY_DAYS, as it does the membership. The reader leaves `r` rows out.
 *
 * `kind` is checked (migration 17), and SQLite cannot change a CHECK constraint in place: the table
 * is made again and its rows copied in rowid order (the layout migration 17 chose stays), then the
 * reverse rows are added from the accounts sets. The copy is the cost: of the order of migration
 * 17's (README "Upgrading").
 *
 * PostgreSQL keeps its tables and its identity index: its statement adds members with one round
 * trip, and the index is not what its write costs.
 */
export const historyReverseRows: Migration = {
  version: 18,
  name: 'SQLite history: erasure by reverse rows under the person',
  async up(db, engine) {
    if (engine !== 'sqlite') return;
    await sql`create table history_cells_18 (
      account_id text not null,
      key blob not null,
      kind text not null check (kind in ('k', 'm', 'h', 'a', 'd', 'c', 'r')),
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
    const columns = sql.raw('account_id, key, kind, sub, n, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous');
    await sql`insert into history_cells_18 (rowid, ${columns}) select rowid, ${columns} from history_cells order by rowid`.execute(db);
    await sql`insert into history_cells_18 (account_id, key, kind, sub, last_seen)
      select account_id, sub, 'r', key, last_seen from history_cells where kind = 'a'`.execute(db);
    await db.schema.dropTable('history_cells').execute();
    await sql`alter table history_cells_18 rename to history_cells`.execute(db);
    await sql`create index history_cells_age on history_cells (kind, last_seen)`.execute(db);
  },
};
