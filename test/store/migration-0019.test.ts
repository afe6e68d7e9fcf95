import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/history/caps.js';
import { historyEvent } from '../../src/history/event.js';
import type { Place } from '../../src/history/place.js';
import { openStore, type Store } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { packedRows } from '../support/history-rows.js';
import { engineAtVersion } from '../support/store.js';

/**
 * Migration 19 (SQLite): history_cells (a row a cell) packed into history_packed (a row an
 * identifier). Every key's cells kept, whichever page of the copy they fall on (a key's rows cut by
 * a page's end are one row still), read back through the store, and the old table gone.
 */
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

const T = Date.parse('2026-06-01T12:00:00Z');
const MINUTE = Math.floor(T / MINUTE_MS);
const HOUR = Math.floor(T / HOUR_MS);
const LONDON: Place = { country: 'GB', latitude: 51.5, longitude: -0.1, radiusKm: 10, asn: 20712, anonymous: false };
const IP = Buffer.alloc(16, 0xff);
/** More people than one page of the copy reads (20,000 cells): 8 cells each. */
const PEOPLE = 3_000;
const user = (i: number) => {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(i + 1);
  return b;
};
const device = (i: number) => {
  const b = user(i);
  b[15] = 0xdd;
  return b;
};

describe('migration 19 on SQLite', () => {
  it('packs every key\'s cells into its one row, across the copy\'s pages, read back through the store', async () => {
    const { old, db } = await engineAtVersion('sqlite', 18);
    try {
      // Not in today's schema (this migration drops it): typed here as it was.
      const legacy = old.db as unknown as Kysely<{ history_cells: Record<string, unknown> }>;
      const cells: Array<Record<string, unknown>> = [];
      const account_id = 'acme';
      for (let i = 0; i < PEOPLE; i++) {
        const at = T - HOUR_MS + i;
        cells.push(
          { account_id, key: user(i), kind: 'k', sub: 0, first_seen: T - 10 * DAY_MS, last_seen: at, country: 'GB', latitude: 51.5, longitude: -0.1, radius_km: 10, asn: 20712, anonymous: 0 },
          { account_id, key: user(i), kind: 'h', sub: HOUR - 1, n: 2, last_seen: at },
          { account_id, key: user(i), kind: 'd', sub: device(i), last_seen: at },
          { account_id, key: user(i), kind: 'c', sub: Buffer.from('GB'), last_seen: at },
          { account_id, key: user(i), kind: 'r', sub: IP, last_seen: at },
          { account_id, key: user(i), kind: 'r', sub: device(i), last_seen: at },
          { account_id, key: device(i), kind: 'm', sub: MINUTE - 1, n: 1, last_seen: at },
          { account_id, key: device(i), kind: 'a', sub: user(i), last_seen: at },
        );
        if (i >= PEOPLE - 100) cells.push({ account_id, key: IP, kind: 'a', sub: user(i), last_seen: at });
      }
      cells.push({ account_id, key: IP, kind: 'm', sub: MINUTE - 1, n: 40, last_seen: T - MINUTE_MS }, { account_id, key: IP, kind: 'h', sub: HOUR - 1, n: 400, last_seen: T - HOUR_MS });
      for (let i = 0; i < cells.length; i += 500) await legacy.insertInto('history_cells').values(cells.slice(i, i + 500)).execute();
    } finally {
      await old.close();
    }

    const store = await openStore({ database: db, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true, historyDays: 180, now: () => T });
    opened.push(store);
    expect(store.migration.applied).toEqual(MIGRATIONS.filter((m) => m.version > 18).map((m) => `${m.version} ${m.name}`));
    const tables = await sql<{ name: string }>`select name from sqlite_master where name like 'history_%' and sql is not null order by name`.execute(store.engine.db);
    expect(tables.rows.map((t) => t.name)).toEqual(['history_packed', 'history_packed_oldest', 'history_velocity', 'history_velocity_expires']);

    const rows = await packedRows(store);
    expect(rows.length).toBe(2 * PEOPLE + 1);
    const byKey = new Map(rows.map((r) => [r.key.toString('hex'), r]));
    for (let i = 0; i < PEOPLE; i++) {
      const at = T - HOUR_MS + i;
      expect(byKey.get(user(i).toString('hex')), `user ${i}`).toMatchObject({
        firstSeen: T - 10 * DAY_MS, lastSeen: at, country: 'GB', asn: 20712, anonymous: 0,
        counts: new Map([[2e9 + HOUR - 1, 2]]),
        members: new Map([[`d${device(i).toString('latin1')}`, at], ['cGB', at]]),
        reverse: new Map([[IP.toString('latin1'), at], [device(i).toString('latin1'), at]]),
      });
      expect(byKey.get(device(i).toString('hex')), `device ${i}`).toMatchObject({ firstSeen: null, counts: new Map([[1e9 + MINUTE - 1, 1]]), members: new Map([[`a${user(i).toString('latin1')}`, at]]) });
    }
    expect(byKey.get(IP.toString('hex'))!.members.size).toBe(100);
    const [stale] = (await sql<{ n: number }>`select count(*) as n from history_packed where oldest is null or oldest < ${T - HOUR_MS}`.execute(store.engine.db)).rows;
    expect(stale!.n).toBe(0);

    // Read back through the store (the key filter, loaded at open, knows the packed keys).
    const last = PEOPLE - 1;
    const prior = (await store.history!.record(historyEvent({ account: 'acme', at: T, ip: IP, email: Buffer.alloc(16, 0xee), identity: user(last), device: device(last), user: user(last), place: LONDON })))!;
    expect(prior.ip).toMatchObject({ minutes: 40, hours: 400, accounts: { count: 100, current: T - HOUR_MS + last } });
    expect(prior.device).toEqual({ minutes: 1, firstSeen: null, accounts: { count: 1, current: T - HOUR_MS + last } });
    expect(prior.user).toMatchObject({ firstSeen: T - 10 * DAY_MS, lastSeen: T - HOUR_MS + last, place: LONDON, devices: { count: 1 }, countries: { count: 1 } });
    // Erased through the reverse entries the copy kept.
    expect(await store.history!.erase('acme', [user(0)])).toEqual({ identifiers: 1, counters: 1, memberships: 3 });
  });
});
