import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/history/caps.js';
import { historyEvent } from '../../src/history/event.js';
import type { Place } from '../../src/history/place.js';
import { openStore, type Store } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { historyRowCount } from '../support/history-rows.js';
import { engineAtVersion, ENGINES, freshDatabaseUrl, openTestStore, type EngineName } from '../support/store.js';

/**
 * Migration 17 on a store whose history was written by version 16's schema: SQLite's three tables
 * become one by key, and what they held reads back through the store as before (counters summed
 * over shards and out-of-window ones left out, the user's place, every set), is erased (the
 * person's rows, their place in accounts sets, their devices' velocity counters) and pruned.
 * PostgreSQL keeps its tables: the same behaviour, on both engines.
 */
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

const T = Date.parse('2026-06-01T12:00:00Z');
const MINUTE = Math.floor(T / MINUTE_MS);
const HOUR = Math.floor(T / HOUR_MS);
const [IP, USER, DEVICE, EMAIL] = [1, 2, 3, 4].map((i) => Buffer.alloc(16, i)) as [Buffer, Buffer, Buffer, Buffer];
const GB = Buffer.from('GB', 'latin1');
const LONDON: Place = { country: 'GB', latitude: 51.5, longitude: -0.1, radiusKm: 10, asn: 20712, anonymous: false };

describe.each(ENGINES)('migration 17 on %s', (engine: EngineName) => {
  it('keeps what version 16 wrote: read back, erased and pruned through the store', async () => {
    const { old, db } = await engineAtVersion(engine, 16);
    try {
      const account_id = 'acme';
      await old.db.insertInto('history_keys').values([
        { account_id, key: USER, first_seen: T - 10 * DAY_MS, last_seen: T - HOUR_MS, country: 'GB', latitude: 51.5, longitude: -0.1, radius_km: 10, asn: 20712, anonymous: 0 },
        { account_id, key: DEVICE, first_seen: T - 2 * DAY_MS, last_seen: T - HOUR_MS, country: null, latitude: null, longitude: null, radius_km: null, asn: null, anonymous: null },
      ]).execute();
      await old.db.insertInto('history_counts').values([
        // Two shards of one minute (PostgreSQL writes several; they are summed), an hour, and a minute out of the window.
        { account_id, key: IP, grain: 1, bucket: MINUTE - 1, shard: 0, n: 3 },
        { account_id, key: IP, grain: 1, bucket: MINUTE - 1, shard: 1, n: 2 },
        { account_id, key: IP, grain: 2, bucket: HOUR - 1, shard: 0, n: 7 },
        { account_id, key: IP, grain: 1, bucket: MINUTE - 100, shard: 0, n: 9 },
      ]).execute();
      await old.db.insertInto('history_members').values([
        { account_id, key: IP, kind: 'a', member: USER, last_seen: T - HOUR_MS },
        { account_id, key: DEVICE, kind: 'a', member: USER, last_seen: T - HOUR_MS },
        { account_id, key: USER, kind: 'd', member: DEVICE, last_seen: T - HOUR_MS },
        { account_id, key: USER, kind: 'c', member: GB, last_seen: T - HOUR_MS },
      ]).execute();
      await old.db.insertInto('history_velocity').values({ account_id, key: DEVICE, series: 's', bucket: MINUTE - 1, shard: 0, n: 4, expires: MINUTE + 60 }).execute();
    } finally {
      await old.close();
    }

    let now = T;
    const store = await openStore({ database: db, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true, historyDays: 180, now: () => now });
    opened.push(store);
    expect(store.migration.applied).toEqual(MIGRATIONS.filter((m) => m.version > 16).map((m) => `${m.version} ${m.name}`));
    if (engine === 'sqlite') {
      // The old tables are gone; every row is in the new one, the two shards as one counter.
      const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name like 'history_%' order by name`.execute(store.engine.db);
      expect(tables.rows.map((t) => t.name)).toEqual(['history_packed', 'history_velocity']); // migration 19 packed history_cells
      expect([await historyRowCount(store, 'identifiers'), await historyRowCount(store, 'counters'), await historyRowCount(store, 'members')]).toEqual([2, 3, 4]);
    }

    // Read back through the store (SQLite: the key filter, loaded at open, knows the keys).
    const event = historyEvent({ account: 'acme', at: T, ip: IP, email: EMAIL, identity: USER, device: DEVICE, user: USER, place: LONDON });
    const prior = (await store.history!.record(event))!;
    expect(prior.ip).toEqual({ minutes: 5, hours: 7, accounts: { count: 1, current: T - HOUR_MS } });
    expect(prior.device).toEqual({ minutes: 0, firstSeen: T - 2 * DAY_MS, accounts: { count: 1, current: T - HOUR_MS } });
    expect(prior.user).toEqual({
      firstSeen: T - 10 * DAY_MS, lastSeen: T - HOUR_MS, place: LONDON,
      devices: { count: 1, current: T - HOUR_MS }, countries: { count: 1, current: T - HOUR_MS }, baseline: { devices: true, countries: true },
    });

    // Erased: the user's row, own sets (its device and country) and place among the IP's and the
    // device's accounts, and the device's velocity counter.
    expect(await store.history!.erase('acme', [USER])).toEqual({ identifiers: 1, counters: 1, memberships: 4 });
    const again = historyEvent({ account: 'acme', at: T + MINUTE_MS, ip: IP, email: EMAIL, identity: Buffer.alloc(16, 9), device: DEVICE, user: USER, place: LONDON });
    const after = (await store.history!.record(again))!;
    expect(after.user).toMatchObject({ firstSeen: null, devices: { count: 0 }, countries: { count: 0 } });
    expect(after.ip.accounts).toEqual({ count: 0, current: null });
    expect(after.ip.minutes).toBe(6);

    // Pruned two hours on: PostgreSQL's minute counters go (their last bucket is out of the hour).
    // SQLite's stay in their rows until the row is next written or its members age out (migration
    // 19): a row keeps only counters within a window of its own latest event (the IP's minutes
    // before T, at T and after it; the device's at T and after). No window reads them. The hour counters are kept
    // (the IP's two hours, the e-mail's); past HISTORY_DAYS nothing is left.
    now = T + 2 * HOUR_MS;
    await store.history!.prune();
    const minutes = await historyRowCount(store, 'counters', 'm');
    const hours = await historyRowCount(store, 'counters', 'h');
    if (engine === 'sqlite') expect([minutes, hours]).toEqual([5, 3]);
    else expect([minutes, hours >= 3]).toEqual([0, true]); // sharded
    now = T + 200 * DAY_MS;
    expect(await store.history!.prune()).toBeGreaterThan(0);
    for (const what of ['identifiers', 'counters', 'members'] as const) expect(await historyRowCount(store, what), what).toBe(0);
  });

  it('erases a person\'s history with history off now (HISTORY_DAYS=0): what an earlier setting kept', async () => {
    const url = await freshDatabaseUrl(engine);
    const on = await openTestStore({ url }, { historyDays: 180 });
    const user = on.hashIdentifier('acme', 'user', 'u-1');
    const ip = on.hashIdentifier('acme', 'ip', '203.0.113.7');
    await on.history!.record(historyEvent({ account: 'acme', at: T, ip, email: on.hashIdentifier('acme', 'email', 'ann@example.com'), identity: user, device: DEVICE, user, place: LONDON }));
    await on.close();

    const off = await openTestStore({ url }, { historyDays: 0 });
    opened.push(off);
    expect(off.history).toBeNull();
    // The user's row and its device and country, and the user among the IP's and the device's accounts.
    expect((await off.erase('acme', { userId: 'u-1' }, { actor: 'test' })).history).toEqual({ identifiers: 1, counters: 0, memberships: 4 });
    expect(await historyRowCount(off, 'members', 'a')).toBe(0);
    expect(await historyRowCount(off, 'identifiers')).toBe(2); // the e-mail's and the device's
  });
});
