import { sql } from 'kysely';
import type { Migration } from './types.js';
import { emptyRow, oldestOf, pack, type PackedRow } from '../history-packed.js';

/** Rows of `history_cells` read a page at a time, and packed rows inserted a statement at a time. */
const READ_PAGE = 20_000;
const INSERT_ROWS = 500;

/**
 * SQLite's behaviour history, one row an identifier (issue 24; src/store/history-packed.ts): its
 * counters, set members and reverse entries packed in blobs. Migration 17 put a key's rows side by
 * side and 18 its reverse rows under it, but a new person was still 13 rows written by the writer
 * thread, ~17 µs of SQLite each; the writer's ~270 CPU µs a new person was the largest share of what
 * memory cost the service on SQLite (bench/profile.ts --mix new), and it slowed the main thread
 * beside it. One row an identifier is 3 rows a new person, and the shared address one a write-back.
 *
 * - A rowid table: a new row is appended (pages of one write-back together), its (account, key)
 *   in the primary key's index.
 * - `history_packed_oldest` (oldest): pruning's, the earliest time in the row past which something
 *   in it is to go (history-packed.ts). A new row's is now: appended at the index's newest end.
 *
 * The copy is in JS: `history_cells` read in primary-key order a page at a time (a key's rows are
 * together), each key packed into one row. Counters are copied as they are (the writer drops those
 * no window reads when it next writes the row, pruning when the row's members age out).
 *
 * PostgreSQL keeps its three tables (migration 17's note: one round trip reads and adds to them).
 */
export const historyPacked: Migration = {
  version: 19,
  name: 'SQLite history: one row an identifier, its cells packed',
  async up(db, engine) {
    if (engine !== 'sqlite') return;
    await sql`create table history_packed (
      account_id text not null,
      key blob not null,
      first_seen integer,
      last_seen integer,
      country text,
      latitude real,
      longitude real,
      radius_km real,
      asn integer,
      anonymous integer,
      cells blob,
      reverse blob,
      oldest integer,
      primary key (account_id, key)
    )`.execute(db);

    interface Cell { account_id: string; key: Buffer; kind: string; sub: number | Buffer; n: number | null; first_seen: number | null; last_seen: number | null; country: string | null; latitude: number | null; longitude: number | null; radius_km: number | null; asn: number | null; anonymous: number | null }
    const packed: Array<Record<string, unknown>> = [];
    const flush = async (all: boolean) => {
      while (packed.length >= (all ? 1 : INSERT_ROWS)) await db.insertInto('history_packed').values(packed.splice(0, INSERT_ROWS)).execute();
    };
    let row: PackedRow | null = null;
    const finish = () => {
      if (row === null) return;
      const oldest = oldestOf(row);
      if (oldest !== null || row.firstSeen !== null) {
        const { cells, reverse } = pack(row);
        packed.push({
          account_id: row.account, key: row.key, first_seen: row.firstSeen, last_seen: row.lastSeen, country: row.country, latitude: row.latitude, longitude: row.longitude,
          radius_km: row.radiusKm, asn: row.asn, anonymous: row.anonymous, cells, reverse, oldest,
        });
      }
      row = null;
    };
    let after: Cell | null = null;
    for (;;) {
      const page: Cell[] = (await sql<Cell>`select account_id, key, kind, sub, n, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous from history_cells
        ${after === null ? sql`` : sql`where (account_id, key, kind, sub) > (${after.account_id}, ${after.key}, ${after.kind}, ${after.sub})`}
        order by account_id, key, kind, sub limit ${READ_PAGE}`.execute(db)).rows;
      for (const c of page) {
        if (row === null || row.account !== c.account_id || !row.key.equals(c.key)) {
          finish();
          row = emptyRow(c.account_id, c.key);
        }
        const r: PackedRow = row;
        if (c.kind === 'k') {
          Object.assign(r, { firstSeen: c.first_seen, lastSeen: c.last_seen, country: c.country, latitude: c.latitude, longitude: c.longitude, radiusKm: c.radius_km, asn: c.asn, anonymous: c.anonymous });
        } else if (c.kind === 'm' || c.kind === 'h') {
          r.counts.set((c.kind === 'm' ? 1 : 2) * 1e9 + (c.sub as number), c.n ?? 0);
        } else if (c.kind === 'r') {
          r.reverse.set((c.sub as Buffer).toString('latin1'), c.last_seen ?? 0);
        } else {
          r.members.set(c.kind + (c.sub as Buffer).toString('latin1'), c.last_seen ?? 0);
        }
      }
      await flush(false);
      if (page.length < READ_PAGE) break;
      after = page.at(-1)!;
    }
    finish();
    await flush(true);
    await db.schema.dropTable('history_cells').execute();
    await sql`create index history_packed_oldest on history_packed (oldest)`.execute(db);
  },
};
