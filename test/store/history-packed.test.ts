import Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS, SET_CAP } from '../../src/history/caps.js';
import { historyEvent } from '../../src/history/event.js';
import type { Place } from '../../src/history/place.js';
import { forEachCell, pack, packedHistory, REVERSE_KEEP, unpack, type PackedRow } from '../../src/store/history-packed.js';
import type { Store } from '../../src/store/index.js';
import { historyRowCount, packedRows, packedTraces } from '../support/history-rows.js';
import { database, freshDatabaseUrl, openTestStore } from '../support/store.js';

/**
 * SQLite's history one row an identifier (migration 19, src/store/history-packed.ts): the blobs as
 * written and read back, the writer's read-change-write of a write-back, reverse entries with every
 * accounts-set member and erasure through them (history on and off), pruning.
 */
const opened: Store[] = [];
const closing: Sqlite.Database[] = [];
afterAll(async () => {
  for (const sqlite of closing) sqlite.close();
  await Promise.all(opened.map((s) => s.close()));
});

const T = Date.parse('2026-06-01T12:00:00Z');
const MINUTE = Math.floor(T / MINUTE_MS);
const HOUR = Math.floor(T / HOUR_MS);
const NOWHERE: Place = { country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: false };
const [IP, USER, DEVICE] = [1, 2, 3].map((i) => Buffer.alloc(16, i)) as [Buffer, Buffer, Buffer];
const NO_ROW = { rowid: null, account: 'acme', firstSeen: null, lastSeen: null, country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: null };
const latin1 = (b: Buffer) => b.toString('latin1');

/** A migrated SQLite file and the writer's code on a connection of its own. */
async function packedFile() {
  const url = await freshDatabaseUrl('sqlite');
  const store = await openTestStore({ url }, { historyDays: 0 });
  opened.push(store);
  const db = database(url);
  if (db.engine !== 'sqlite') throw new Error('a SQLite url');
  const sqlite = new Sqlite(db.path);
  closing.push(sqlite);
  const packed = packedHistory(sqlite);
  return {
    store,
    sqlite,
    write: (write: Parameters<typeof packed.write>[0]) => sqlite.transaction(() => packed.write(write)).immediate(),
    prune: (before: number, minute: number, hour: number, limit = 100) => sqlite.transaction(() => packed.prune(before, minute, hour, limit)).immediate(),
    erase: (keys: Buffer[]) => sqlite.transaction(() => packed.erase('acme', keys)).immediate(),
    row: async (key: Buffer) => (await packedRows(store)).find((r) => r.key.equals(key)),
  };
}

describe('the packed cells', () => {
  it('read back as written: counters, members of every kind, reverse entries, a two-byte member', () => {
    const row: PackedRow = {
      ...NO_ROW, key: USER, counts: new Map([[1e9 + MINUTE, 3], [2e9 + HOUR, 70_000]]),
      members: new Map([[`a${latin1(IP)}`, T], [`c${'GB'}`, T - 1], [`d${latin1(DEVICE)}`, T - 2.5]]),
      reverse: new Map([[latin1(IP), T - 3]]),
    };
    const { cells, reverse } = pack(row);
    expect(cells!.length).toBe(2 * 9 + 3 * 10 + 16 + 2 + 16);
    const back = unpack({ ...NO_ROW, key: USER }, cells, reverse);
    expect(back.counts).toEqual(row.counts);
    expect(back.members).toEqual(row.members);
    expect(back.reverse).toEqual(row.reverse);
    expect(pack({ ...row, counts: new Map(), members: new Map(), reverse: new Map() })).toEqual({ cells: null, reverse: null });
  });

  it('refuses a blob cut short or with an unknown tag, rather than read a wrong history', () => {
    const { cells } = pack({ ...NO_ROW, key: USER, counts: new Map([[1e9 + MINUTE, 3]]), members: new Map([[`a${latin1(IP)}`, T]]), reverse: new Map() });
    const walk = (blob: Buffer) => () => forEachCell(blob, () => undefined, () => undefined);
    expect(walk(cells!)).not.toThrow();
    expect(walk(cells!.subarray(0, cells!.length - 1))).toThrow(/cut short or unknown/);
    expect(walk(Buffer.concat([cells!, Buffer.from([0x07, 0, 0])]))).toThrow(/cut short or unknown/);
  });
});

describe('the writer on history_packed', () => {
  it('reads, changes and writes each identifier once a write-back; trimmed members go; counters no window reads are dropped', async () => {
    const f = await packedFile();
    f.write({
      fresh: [['acme', USER]],
      keys: [['acme', USER, T - DAY_MS, T, 'GB', 51.5, -0.1, 10, 20712, 0]],
      counts: [['acme', IP, 1, MINUTE - 61, 4, T], ['acme', IP, 1, MINUTE, 2, T], ['acme', IP, 2, HOUR, 9, T]],
      members: [['acme', IP, 'a', USER, T], ['acme', IP, 'a', DEVICE, T - 5], ['acme', USER, 'd', DEVICE, T]],
      evicted: [],
      velocity: [],
    });
    const ip = (await f.row(IP))!;
    // The minute 61 before the row's latest is read by no window: not written.
    expect(ip.counts).toEqual(new Map([[1e9 + MINUTE, 2], [2e9 + HOUR, 9]]));
    expect(ip.firstSeen).toBeNull();
    expect((await f.row(USER))!).toMatchObject({ firstSeen: T - DAY_MS, lastSeen: T, country: 'GB', asn: 20712, reverse: new Map([[latin1(IP), T]]) });
    const [oldest] = (await sql<{ oldest: number }>`select oldest from history_packed where key = ${IP}`.execute(f.store.engine.db)).rows;
    expect(oldest!.oldest).toBe(T - 5);

    // The next write-back: a member trimmed, another seen again, a counter added to.
    f.write({ keys: [], counts: [['acme', IP, 1, MINUTE, 3, T]], members: [['acme', IP, 'a', USER, T + 1]], evicted: [['acme', IP, 'a', DEVICE]], velocity: [] });
    expect((await f.row(IP))!).toMatchObject({ counts: new Map([[1e9 + MINUTE, 3], [2e9 + HOUR, 9]]), members: new Map([[`a${latin1(USER)}`, T + 1]]) });
    expect(await historyRowCount(f.store, 'identifiers')).toBe(1);
  });

  it('takes a member sent again as it is (the main thread sends all a set holds) without touching the member\'s own row', async () => {
    const f = await packedFile();
    const member = { keys: [], counts: [], evicted: [], velocity: [] };
    f.write({ ...member, members: [['acme', IP, 'a', USER, T]] });
    expect((await f.row(USER))!.reverse).toEqual(new Map([[latin1(IP), T]]));
    // Sent again unchanged, then the person erased: the reverse entry written the first time
    // still leads erasure to the address.
    f.write({ ...member, members: [['acme', IP, 'a', USER, T]] });
    expect(f.erase([USER])).toEqual({ identifiers: 0, counters: 0, memberships: 1 });
    expect((await f.row(IP))?.members ?? new Map()).toEqual(new Map());

    // What the skip leaves alone, made visible: with the person's row deleted by hand (no path of
    // the service leaves a membership without its reverse entry), a member sent again unchanged
    // does not write the row back; seen later, it does, with the reverse entry.
    f.write({ ...member, members: [['acme', IP, 'a', USER, T]] });
    f.sqlite.prepare('delete from history_packed where key = ?').run(USER);
    f.write({ ...member, members: [['acme', IP, 'a', USER, T]] });
    expect(await f.row(USER)).toBeUndefined();
    expect((await f.row(IP))!.members).toEqual(new Map([[`a${latin1(USER)}`, T]]));
    f.write({ ...member, members: [['acme', IP, 'a', USER, T + 1]] });
    expect((await f.row(USER))!.reverse).toEqual(new Map([[latin1(IP), T + 1]]));
  });

  it('adds to what the file holds when a subject said fresh is there after all: nothing lost', async () => {
    const f = await packedFile();
    f.write({ keys: [['acme', USER, T - DAY_MS, T - DAY_MS, null, null, null, null, null, null]], counts: [['acme', USER, 2, HOUR, 5, T]], members: [['acme', USER, 'd', DEVICE, T - DAY_MS]], evicted: [], velocity: [] });
    f.write({ fresh: [['acme', USER]], keys: [['acme', USER, T, T, 'GB', null, null, null, null, null]], counts: [['acme', USER, 2, HOUR, 1, T]], members: [['acme', USER, 'c', Buffer.from('GB'), T]], evicted: [], velocity: [] });
    expect((await f.row(USER))!).toMatchObject({
      firstSeen: T - DAY_MS, lastSeen: T, country: 'GB', counts: new Map([[2e9 + HOUR, 6]]),
      members: new Map([[`d${latin1(DEVICE)}`, T - DAY_MS], ['cGB', T]]),
    });
    expect(await historyRowCount(f.store, 'identifiers')).toBe(1);
  });

  it('finds a row by its key\'s bytes, whatever object carries them: one Buffer for two accounts\' keys, a key met again as a member', async () => {
    const f = await packedFile();
    // The decoder hands one Buffer for a subject's rows, and the writer looks rows up by that
    // object first; a caller may give one object for two accounts, or the same bytes in two.
    const shared = Buffer.from(USER);
    const first = Buffer.from(USER);
    const again = Buffer.from(USER);
    f.write({
      // acme's USER also named fresh twice through two more objects: one row all the same.
      fresh: [['acme', first], ['acme', shared], ['other', shared], ['acme', again]],
      keys: [['acme', shared, T, T, 'GB', null, null, null, null, null], ['other', shared, T - 1, T - 1, 'FR', null, null, null, null, null]],
      counts: [['acme', first, 2, HOUR, 1, T], ['other', shared, 2, HOUR, 4, T], ['acme', again, 1, MINUTE, 2, T]],
      members: [['acme', IP, 'a', Buffer.from(USER), T]], evicted: [], velocity: [],
    });
    const rows = (await packedRows(f.store)).filter((r) => r.key.equals(USER));
    expect(rows.map((r) => [r.account, r.country, r.counts, r.reverse])).toEqual([
      ['acme', 'GB', new Map([[2e9 + HOUR, 1], [1e9 + MINUTE, 2]]), new Map([[latin1(IP), T]])],
      ['other', 'FR', new Map([[2e9 + HOUR, 4]]), new Map()],
    ]);
  });

  it('prunes what is past HISTORY_DAYS out of a row and keeps the rest; deletes a row left with nothing', async () => {
    const f = await packedFile();
    f.write({
      keys: [['acme', USER, T - 10 * DAY_MS, T - 10 * DAY_MS, null, null, null, null, null, null], ['acme', DEVICE, T - 10 * DAY_MS, T, null, null, null, null, null, null]],
      counts: [['acme', DEVICE, 1, MINUTE, 1, T]],
      members: [['acme', DEVICE, 'a', USER, T - 10 * DAY_MS], ['acme', DEVICE, 'a', IP, T]],
      evicted: [],
      velocity: [],
    });
    // HISTORY_DAYS 2, a day on: the user (an identifier and a reverse entry, both old) goes; the
    // device keeps itself, its recent member and its counter, and loses the old member.
    const before = T + DAY_MS - 2 * DAY_MS;
    expect(f.prune(before, MINUTE - 60, HOUR - 24)).toEqual({ removed: 3, rows: 2 });
    expect(await f.row(USER)).toBeUndefined();
    expect((await f.row(DEVICE))!).toMatchObject({ firstSeen: T - 10 * DAY_MS, counts: new Map([[1e9 + MINUTE, 1]]), members: new Map([[`a${latin1(IP)}`, T]]) });
    // Nothing else is old: a second pass finds no row.
    expect(f.prune(before, MINUTE - 60, HOUR - 24)).toEqual({ removed: 0, rows: 0 });
    // Past everything: the device's row goes, its counter with it, and the address's reverse entry
    // for it (written with the device's accounts-set member), its row with it.
    expect(f.prune(T + 1, MINUTE + 1, HOUR + 1)).toEqual({ removed: 4, rows: 2 });
    expect(await packedRows(f.store)).toEqual([]);
  });
});

describe('a person in more accounts sets than their row keeps reverse entries for', () => {
  it('keeps REVERSE_KEEP entries and an overflow mark, and erases the person from every set all the same', async () => {
    const f = await packedFile();
    const holders = Array.from({ length: REVERSE_KEEP + 5 }, (_, i) => {
      const b = Buffer.alloc(16, 0xaa);
      b.writeUInt32BE(i);
      return b;
    });
    // One account from many addresses (credential stuffing through proxies), over two write-backs.
    for (const part of [holders.slice(0, 200), holders.slice(200)]) {
      f.write({ keys: [['acme', USER, T, T, null, null, null, null, null, null]], counts: [], members: part.map((h, i) => ['acme', h, 'a', USER, T + i]), evicted: [], velocity: [] });
    }
    const user = (await f.row(USER))!;
    // The row stays bounded: REVERSE_KEEP named, and one entry for the rest (its time the latest of them).
    expect(user.reverse.size).toBe(REVERSE_KEEP + 1);
    expect(user.reverse.get('')).toBe(T + holders.length - 200 - 1);
    expect(f.erase([USER])).toEqual({ identifiers: 1, counters: 0, memberships: holders.length });
    expect(await packedTraces(f.store, USER)).toBe(0);
    // The addresses' rows had nothing else: gone with the person.
    expect(await packedRows(f.store)).toEqual([]);
  });

  it('prunes a row it cannot read instead of stopping on it', async () => {
    const f = await packedFile();
    f.write({ keys: [['acme', USER, T, T, null, null, null, null, null, null]], counts: [], members: [['acme', USER, 'd', DEVICE, T]], evicted: [], velocity: [] });
    f.sqlite.prepare('update history_packed set cells = ? where key = ?').run(Buffer.from([0x61, 40, 1, 2]), USER);
    f.write({ keys: [['acme', DEVICE, T, T, null, null, null, null, null, null]], counts: [], members: [], evicted: [], velocity: [] });
    expect(f.prune(T + 1, MINUTE + 1, HOUR + 1)).toEqual({ removed: 2, rows: 2 });
    expect(await packedRows(f.store)).toEqual([]);
  });
});

describe('reverse entries and erasure (history on and off)', () => {
  it('writes a reverse entry with each accounts-set member; erases through them with history on and off; prunes them', async () => {
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
      // to prune), so that trimming them from the address's set later changes the file's row.
      if (i === 19) await on.history!.prune();
    }
    await on.close();

    const off = await openTestStore({ url }, { historyDays: 0, now: () => now });
    opened.push(off);
    // Every accounts-set member written has its reverse entry; the people trimmed from the address's
    // set after it was written keep theirs (one trimmed before its write-back was never written).
    const rows = await packedRows(off);
    const byKey = new Map(rows.map((r) => [latin1(r.key), r]));
    let members = 0;
    for (const row of rows) {
      for (const m of row.members.keys()) {
        if (m[0] !== 'a') continue;
        members += 1;
        expect(byKey.get(m.slice(1))?.reverse.get(latin1(row.key))).toBe(row.members.get(m));
      }
    }
    expect(members).toBe(await historyRowCount(off, 'members', 'a'));
    expect(await historyRowCount(off, 'members', 'r')).toBeGreaterThan(members);

    // Erased with history off (HISTORY_DAYS=0): one still in the address's set, one trimmed from it.
    expect((await off.erase('acme', { userId: `u${people - 1}` }, { actor: 'test' })).history).toMatchObject({ identifiers: 1, memberships: 3 });
    expect(await packedTraces(off, person(people - 1).user)).toBe(0);
    expect((await off.erase('acme', { userId: 'u0' }, { actor: 'test' })).history).toMatchObject({ identifiers: 1, memberships: 2 });
    expect(await packedTraces(off, person(0).user)).toBe(0);
    await off.close();
    opened.pop();

    // With history on: the writer thread's erasure, the same.
    const again = await openTestStore({ url }, { historyDays: 2, now: () => now });
    opened.push(again);
    expect(await again.history!.erase('acme', [person(1).user])).toMatchObject({ identifiers: 1, memberships: 2 });
    expect(await packedTraces(again, person(1).user)).toBe(0);

    // Past HISTORY_DAYS, pruning takes the reverse entries with the memberships: no row is left.
    now += 3 * DAY_MS;
    await again.history!.prune();
    expect(await packedRows(again)).toEqual([]);
  });
});
