import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, SET_CAP } from '../../src/history/caps.js';
import { historyEvent } from '../../src/history/event.js';
import type { Place } from '../../src/history/place.js';
import { openStore, type Store } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { historyRowCount } from '../support/history-rows.js';
import { engineAtVersion, freshDatabaseUrl, openTestStore } from '../support/store.js';

/**
 * Migration 18 (SQLite): erasure finds a person among the accounts sets of IPs and devices through
 * reverse rows under the person's own key, not through an index of members. Checked here: what
 * version 17 wrote gets its reverse rows and is erased without a trace of the person (no row under
 * their key, none naming them); what the writer writes after it too, with history on and off; a
 * member trimmed from a full set keeps its reverse row and is not counted again; pruning takes the
 * reverse rows with the rest.
 */
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

const T = Date.parse('2026-06-01T12:00:00Z');
const [IP, USER, DEVICE, OTHER] = [1, 2, 3, 4].map((i) => Buffer.alloc(16, i)) as [Buffer, Buffer, Buffer, Buffer];
const NOWHERE: Place = { country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: false };

/** Rows under the key, and rows naming it (as a set's member, or a reverse row's set). */
async function traces(store: Store, key: Buffer) {
  const { rows } = await sql<{ n: number }>`select count(*) as n from history_cells where key = ${key} or sub = ${key}`.execute(store.engine.db);
  return Number(rows[0]!.n);
}
const reverseRows = async (store: Store) => (await sql<{ n: number }>`select count(*) as n from history_cells where kind = 'r'`.execute(store.engine.db)).rows[0]!.n;

describe('migration 18 on SQLite', () => {
  it('gives what version 17 wrote its reverse rows, keeps every row where it was, and erases the person without a trace', async () => {
    const { old, db } = await engineAtVersion('sqlite', 17);
    let rowids: unknown[];
    try {
      const account_id = 'acme';
      await old.db.insertInto('history_cells').values([
        { account_id, key: USER, kind: 'k', sub: 0, first_seen: T - 10 * DAY_MS, last_seen: T - HOUR_MS },
        { account_id, key: USER, kind: 'd', sub: DEVICE, last_seen: T - HOUR_MS },
        { account_id, key: IP, kind: 'm', sub: Math.floor(T / 60_000) - 1, n: 3, last_seen: T - 60_000 },
        { account_id, key: IP, kind: 'a', sub: USER, last_seen: T - HOUR_MS },
        { account_id, key: IP, kind: 'a', sub: OTHER, last_seen: T - 2 * HOUR_MS },
        { account_id, key: DEVICE, kind: 'a', sub: USER, last_seen: T - 3 * HOUR_MS },
      ]).execute();
      rowids = (await sql`select rowid, account_id, key, kind, sub from history_cells order by rowid`.execute(old.db)).rows;
    } finally {
      await old.close();
    }

    const store = await openStore({ database: db, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true, historyDays: 180, now: () => T });
    opened.push(store);
    expect(store.migration.applied).toEqual(MIGRATIONS.filter((m) => m.version > 17).map((m) => `${m.version} ${m.name}`));
    const indexes = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'history_cells' and sql is not null`.execute(store.engine.db);
    expect(indexes.rows.map((i) => i.name)).toEqual(['history_cells_age']);
    expect((await sql`select rowid, account_id, key, kind, sub from history_cells where kind <> 'r' order by rowid`.execute(store.engine.db)).rows).toEqual(rowids);
    // One reverse row per accounts-set member, with its time.
    const reverse = await sql<{ key: Buffer; sub: Buffer; last_seen: number }>`select key, sub, last_seen from history_cells where kind = 'r' order by last_seen`.execute(store.engine.db);
    expect(reverse.rows).toEqual([
      { key: USER, sub: DEVICE, last_seen: T - 3 * HOUR_MS },
      { key: OTHER, sub: IP, last_seen: T - 2 * HOUR_MS },
      { key: USER, sub: IP, last_seen: T - HOUR_MS },
    ]);
    // Read back as before (the reader's range ends before the reverse rows: history-cells-plans.test.ts).
    const event = historyEvent({ account: 'acme', at: T, ip: IP, email: USER, identity: USER, device: DEVICE, user: USER, place: NOWHERE });
    const prior = (await store.history!.record(event))!;
    expect(prior.user).toMatchObject({ firstSeen: T - 10 * DAY_MS, devices: { count: 1 }, countries: { count: 0 } });
    expect(prior.ip.accounts.count).toBe(2);

    // The user's row, their hour counter (recorded just now), their device, and their place among
    // the IP's and the device's accounts; the reverse rows go too, uncounted. The other person's stay.
    expect(await store.history!.erase('acme', [USER])).toEqual({ identifiers: 1, counters: 1, memberships: 3 });
    expect(await traces(store, USER)).toBe(0);
    expect(await traces(store, OTHER)).toBe(2);
  });

  it('writes a reverse row with each accounts-set member; erases through them with history on and off; prunes them', async () => {
    const url = await freshDatabaseUrl('sqlite');
    let now = T;
    const on = await openTestStore({ url }, { historyDays: 2, now: () => now });
    const hash = on.hashIdentifier;
    const ip = hash('acme', 'ip', '203.0.113.7');
    const person = (i: number) => ({ user: hash('acme', 'user', `u${i}`), device: hash('acme', 'device', `d${i}`) });
    // One address, more people than its accounts set keeps: the first ones are trimmed from it.
    const people = SET_CAP + 20;
    for (let i = 0; i < people; i++) {
      const { user, device } = person(i);
      await on.history!.record(historyEvent({ account: 'acme', at: now + i, ip, email: user, identity: user, device, user, place: NOWHERE }));
      // The first ones written back (a prune writes back what is pending first; nothing is old enough
      // to prune), so that trimming them from the address's set later deletes rows of the file.
      if (i === 19) await on.history!.prune();
    }
    await on.close();

    const off = await openTestStore({ url }, { historyDays: 0, now: () => now });
    opened.push(off);
    // Every accounts-set member written has its reverse row; the people trimmed from the address's
    // set after it was written keep theirs (one trimmed before its write-back was never written).
    const { rows: [unmatched] } = await sql<{ n: number }>`select count(*) as n from history_cells a where kind = 'a' and not exists
      (select 1 from history_cells r where r.account_id = a.account_id and r.key = a.sub and r.kind = 'r' and r.sub = a.key)`.execute(off.engine.db);
    expect(unmatched!.n).toBe(0);
    expect(await reverseRows(off)).toBeGreaterThan(await historyRowCount(off, 'members', 'a'));

    // Erased with history off (HISTORY_DAYS=0): one still in the address's set, one trimmed from it.
    expect((await off.erase('acme', { userId: `u${people - 1}` }, { actor: 'test' })).history).toMatchObject({ identifiers: 1, memberships: 3 });
    expect(await traces(off, person(people - 1).user)).toBe(0);
    expect((await off.erase('acme', { userId: 'u0' }, { actor: 'test' })).history).toMatchObject({ identifiers: 1, memberships: 2 });
    expect(await traces(off, person(0).user)).toBe(0);
    await off.close();
    opened.pop();

    // With history on: the writer thread's erasure, the same.
    const again = await openTestStore({ url }, { historyDays: 2, now: () => now });
    opened.push(again);
    expect(await again.history!.erase('acme', [person(1).user])).toMatchObject({ identifiers: 1, memberships: 2 });
    expect(await traces(again, person(1).user)).toBe(0);

    // Past HISTORY_DAYS, pruning takes the reverse rows with the memberships.
    now += 3 * DAY_MS;
    await again.history!.prune();
    expect(await reverseRows(again)).toBe(0);
    for (const what of ['identifiers', 'counters', 'members'] as const) expect(await historyRowCount(again, what), what).toBe(0);
  });
});
