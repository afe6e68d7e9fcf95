import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS } from '../../src/history/caps.js';
import { historyEvent } from '../../src/history/event.js';
import type { Place } from '../../src/history/place.js';
import { openStore, type Store } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { migrate } from '../../src/store/migrate.js';
import { packedTraces } from '../support/history-rows.js';
import { engineAtVersion } from '../support/store.js';

/**
 * Migration 18 (SQLite): erasure finds a person among the accounts sets of IPs and devices through
 * reverse rows under the person's own key, not through an index of members. Checked here: what
 * version 17 wrote gets its reverse rows, and (packed by migration 19) is erased without a trace of
 * the person (no row under their key, none naming them). What the writer writes since migration 19:
 * test/store/history-packed.test.ts.
 */
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

const T = Date.parse('2026-06-01T12:00:00Z');
const [IP, USER, DEVICE, OTHER] = [1, 2, 3, 4].map((i) => Buffer.alloc(16, i)) as [Buffer, Buffer, Buffer, Buffer];
const NOWHERE: Place = { country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: false };


describe('migration 18 on SQLite', () => {
  it('gives what version 17 wrote its reverse rows, keeps every row where it was, and erases the person without a trace', async () => {
    const { old, db } = await engineAtVersion('sqlite', 17);
    let rowids: unknown[];
    try {
      const account_id = 'acme';
      // Not in today's schema (migration 19 packs it): typed here as it was.
      const legacy = old.db as unknown as Kysely<{ history_cells: Record<string, unknown> }>;
      await legacy.insertInto('history_cells').values([
        { account_id, key: USER, kind: 'k', sub: 0, first_seen: T - 10 * DAY_MS, last_seen: T - HOUR_MS },
        { account_id, key: USER, kind: 'd', sub: DEVICE, last_seen: T - HOUR_MS },
        { account_id, key: IP, kind: 'm', sub: Math.floor(T / 60_000) - 1, n: 3, last_seen: T - 60_000 },
        { account_id, key: IP, kind: 'a', sub: USER, last_seen: T - HOUR_MS },
        { account_id, key: IP, kind: 'a', sub: OTHER, last_seen: T - 2 * HOUR_MS },
        { account_id, key: DEVICE, kind: 'a', sub: USER, last_seen: T - 3 * HOUR_MS },
      ]).execute();
      rowids = (await sql`select rowid, account_id, key, kind, sub from history_cells order by rowid`.execute(old.db)).rows;
      // Migration 18 alone (19 packs the table: test/store/migration-0019.test.ts).
      await migrate(old, MIGRATIONS.filter((m) => m.version <= 18));
      const indexes = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'history_cells' and sql is not null`.execute(old.db);
      expect(indexes.rows.map((i) => i.name)).toEqual(['history_cells_age']);
      expect((await sql`select rowid, account_id, key, kind, sub from history_cells where kind <> 'r' order by rowid`.execute(old.db)).rows).toEqual(rowids);
      // One reverse row per accounts-set member, with its time.
      const reverse = await sql<{ key: Buffer; sub: Buffer; last_seen: number }>`select key, sub, last_seen from history_cells where kind = 'r' order by last_seen`.execute(old.db);
      expect(reverse.rows).toEqual([
        { key: USER, sub: DEVICE, last_seen: T - 3 * HOUR_MS },
        { key: OTHER, sub: IP, last_seen: T - 2 * HOUR_MS },
        { key: USER, sub: IP, last_seen: T - HOUR_MS },
      ]);
    } finally {
      await old.close();
    }

    const store = await openStore({ database: db, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true, historyDays: 180, now: () => T });
    opened.push(store);
    expect(store.migration.applied).toEqual(MIGRATIONS.filter((m) => m.version > 18).map((m) => `${m.version} ${m.name}`));
    // Read back as before, through migration 19's packed rows (the reverse entries are not read).
    const event = historyEvent({ account: 'acme', at: T, ip: IP, email: USER, identity: USER, device: DEVICE, user: USER, place: NOWHERE });
    const prior = (await store.history!.record(event))!;
    expect(prior.user).toMatchObject({ firstSeen: T - 10 * DAY_MS, devices: { count: 1 }, countries: { count: 0 } });
    expect(prior.ip.accounts.count).toBe(2);

    // The user's row, their hour counter (recorded just now), their device, and their place among
    // the IP's and the device's accounts; the reverse rows go too, uncounted. The other person's stay.
    expect(await store.history!.erase('acme', [USER])).toEqual({ identifiers: 1, counters: 1, memberships: 3 });
    expect(await packedTraces(store, USER)).toBe(0);
    expect(await packedTraces(store, OTHER)).toBe(2);
  });
});
