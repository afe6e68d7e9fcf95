import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SET_CAP, SET_KEEP } from '../../src/history/caps.js';
import { historyFacts } from '../../src/history/compute.js';
import { historyEvent } from '../../src/history/event.js';
import { HASHED_FOR_MS, HASHED_KEPT, keyedHasher } from '../../src/history/identifiers.js';
import { COUNTRY_EXTENTS } from '../../src/history/country-extents.js';
import { greatCircleKm, leastDistanceKm, placeOf, type Place } from '../../src/history/place.js';
import type { Store } from '../../src/store/index.js';
import { countryExtentsSource } from '../support/country-extents.js';
import { historyRowCount } from '../support/history-rows.js';
import { ENGINES, openTestStore } from '../support/store.js';

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const NOWHERE: Place = { country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: false };
/**
 * The events' time, and the store's clock an hour after it: a store on the wall clock would prune
 * them once the calendar passed HISTORY_DAYS after June 2026 (e2ab2b7).
 */
const AT = Date.parse('2026-06-01T12:00:00Z');
const ON_ITS_CLOCK = { historyDays: 180, now: () => AT + 3_600_000 };

describe.each(ENGINES)('the history store (%s)', (engine) => {
  it('keeps a distinct set bounded: exact up to the cap, then "at least", never more rows than it keeps', async () => {
    store = await openTestStore(engine, ON_ITS_CLOCK);
    const hash = store.hashIdentifier;
    const at = AT;
    let facts;
    for (let i = 0; i < SET_CAP + 5; i++) {
      const identity = hash('acme', 'email', `user${i}@example.com`);
      const event = historyEvent({ account: 'acme', at: at + i, ip: hash('acme', 'ip', '203.0.113.7'), email: identity, identity, device: null, user: null, place: NOWHERE });
      facts = historyFacts((await store.history!.record(event))!, event);
      if (i === SET_CAP - 1) expect(facts.ip.accounts_24h).toBe(SET_CAP);
      if (i === SET_CAP - 1) expect(facts.at_least).toEqual([]);
    }
    expect(facts!.ip).toEqual({ events_1h: SET_CAP + 5, events_24h: SET_CAP + 5, accounts_24h: SET_CAP });
    expect(facts!.at_least).toEqual(['ip.accounts_24h']);
    await store.close();
    store = await openTestStore({ url: store.engine.database.engine === 'sqlite' ? `sqlite:${(store.engine.database as { path: string }).path}` : (store.engine.database as { connectionString: string }).connectionString }, ON_ITS_CLOCK);
    expect(await historyRowCount(store, 'members', 'a')).toBeLessThanOrEqual(SET_KEEP + 1);
  });

  it('keeps "anonymous" unknown when a flag is unknown, through the file too: a previous place is never clean on a guess', async () => {
    store = await openTestStore(engine, ON_ITS_CLOCK);
    const hash = store.hashIdentifier;
    const at = AT;
    const user = hash('acme', 'user', 'u1');
    // The Anonymous-IP database not loaded: is_vpn unknown; the other sources say no.
    const unsure = placeOf({ country_code: 'GB', latitude: 51.5, longitude: -0.1, accuracy_radius_km: 10, asn: 20712, is_vpn: null, is_proxy: false, is_tor: false, is_datacenter: false } as never);
    expect(unsure.anonymous).toBeNull();
    const clean = { ...unsure, anonymous: false };
    const event = (i: number, place: Place) => historyEvent({ account: 'acme', at: at + i * 60_000, ip: hash('acme', 'ip', `203.0.113.${i}`), email: user, identity: user, device: null, user, place });
    await store.history!.record(event(0, unsure));
    // Reopened: the previous place is read from the file (SQLite's memory is gone).
    await store.close();
    store = await openTestStore({ url: store.engine.database.engine === 'sqlite' ? `sqlite:${(store.engine.database as { path: string }).path}` : (store.engine.database as { connectionString: string }).connectionString }, ON_ITS_CLOCK);
    const second = event(1, clean);
    expect(historyFacts((await store.history!.record(second))!, second).user!.previous!.anonymous).toBeNull();
    const third = event(2, clean);
    expect(historyFacts((await store.history!.record(third))!, third).user!.previous!.anonymous).toBe(false);
  });

  it('new device and new country only against a baseline: unknown while the user\'s earlier events had none', async () => {
    store = await openTestStore(engine, ON_ITS_CLOCK);
    const hash = store.hashIdentifier;
    const at = AT;
    const user = hash('acme', 'user', 'u1');
    const gb: Place = { ...NOWHERE, country: 'GB' };
    const au: Place = { ...NOWHERE, country: 'AU' };
    const facts = async (i: number, device: string | null, place: Place) => {
      const event = historyEvent({ account: 'acme', at: at + i * 60_000, ip: hash('acme', 'ip', '203.0.113.7'), email: user, identity: user, device: device === null ? null : hash('acme', 'device', device), user, place });
      return historyFacts((await store!.history!.record(event))!, event).user!;
    };
    // Earlier events with no device hash and no known country: a returning user, but no baseline.
    await facts(0, null, NOWHERE);
    await facts(1, null, NOWHERE);
    expect(await facts(2, 'phone', gb)).toMatchObject({ new_device: null, new_country: null });
    expect(await facts(3, 'phone', gb)).toMatchObject({ new_device: false, new_country: false });
    expect(await facts(4, 'laptop', au)).toMatchObject({ new_device: true, new_country: true });
  });

  it('prunes by age: counters past their window, identifiers past HISTORY_DAYS', async () => {
    let now = Date.parse('2026-06-01T12:00:00Z');
    store = await openTestStore(engine, { historyDays: 2, now: () => now });
    const hash = store.hashIdentifier;
    const email = hash('acme', 'email', 'old@example.com');
    const event = historyEvent({ account: 'acme', at: now, ip: hash('acme', 'ip', '203.0.113.7'), email, identity: email, device: null, user: null, place: NOWHERE });
    await store.history!.record(event);
    now += 3 * 86_400_000;
    // 2 IP counters, 1 e-mail counter, 1 membership (and on SQLite its reverse row, migration 18), 1 identifier.
    expect(await store.history!.prune()).toBe(engine === 'sqlite' ? 6 : 5);
    for (const what of ['identifiers', 'counters', 'members'] as const) expect(await historyRowCount(store, what), what).toBe(0);
  });

  it('keeps a member trimmed from a full set and seen again before the next write-back', async () => {
    const at = AT;
    // The store's own clock: its prune keeps these events whatever the date the test runs on.
    store = await openTestStore(engine, ON_ITS_CLOCK);
    const hash = store.hashIdentifier;
    const ip = hash('acme', 'ip', '203.0.113.7');
    const person = (i: number) => hash('acme', 'email', `p${i}@example.com`);
    const event = (i: number, t: number) => historyEvent({ account: 'acme', at: t, ip, email: person(i), identity: person(i), device: null, user: null, place: NOWHERE });
    await store.history!.record(event(0, at));
    await store.history!.prune(); // written back (nothing is old enough to prune)
    // The address's set fills past SET_KEEP: the first person, the oldest, is trimmed from it, then
    // comes back, all before the next write-back (SQLite: one batch holds the delete and the upsert;
    // its record() is synchronous, so no timer, the write-back's included, runs inside this loop).
    for (let i = 1; i <= SET_KEEP + 1; i++) await store.history!.record(event(i, at + i));
    await store.history!.record(event(0, at + SET_KEEP + 2));
    // Erasure counts what the store holds: the person among the address's accounts.
    expect((await store.history!.erase('acme', [person(0)])).memberships).toBe(1);
  });

  it('closes with a prune running: the prune stops between batches, close waits for it, the next prune takes the rest', async () => {
    let now = Date.parse('2026-06-01T12:00:00Z');
    const options = { historyDays: 2, now: () => now, historyPruneBatch: 1 };
    store = await openTestStore(engine, options);
    const url = store.engine.database.engine === 'sqlite' ? `sqlite:${(store.engine.database as { path: string }).path}` : (store.engine.database as { connectionString: string }).connectionString;
    const hash = store.hashIdentifier;
    for (let i = 0; i < 40; i++) {
      const email = hash('acme', 'email', `old${i}@example.com`);
      await store.history!.record(historyEvent({ account: 'acme', at: now + i, ip: hash('acme', 'ip', `203.0.113.${i}`), email, identity: email, device: null, user: null, place: NOWHERE }));
    }
    now += 3 * 86_400_000;
    // 200 rows (5 an event, as above; 240 on SQLite), one per statement: the prune is still running when the store closes.
    const rows = engine === 'sqlite' ? 240 : 200;
    const pruning = store.history!.prune();
    await new Promise((resolve) => setImmediate(resolve));
    await store.close();
    // Before, the prune went on after close: on PostgreSQL through the pool close() had ended
    // ("Cannot use a pool after calling end on the pool"), on SQLite to a released writer thread.
    const first = await pruning;
    expect(first).toBeLessThan(rows);

    store = await openTestStore({ url }, options);
    expect(await store.history!.prune()).toBe(rows - first);
    for (const what of ['identifiers', 'counters', 'members'] as const) expect(await historyRowCount(store, what), what).toBe(0);
  });
});

describe('places and distances', () => {
  it('measures great circles (London to Sydney is 16,990 km) and subtracts the radii, never below 0', () => {
    expect(Math.round(greatCircleKm(51.5142, -0.0931, -33.87, 151.21))).toBeGreaterThan(16_980);
    expect(Math.round(greatCircleKm(51.5142, -0.0931, -33.87, 151.21))).toBeLessThan(17_000);
    const london: Place = { ...NOWHERE, latitude: 51.5, longitude: -0.1, radiusKm: 10 };
    expect(leastDistanceKm(london, { ...london, latitude: 51.6 })).toBe(0);
    expect(leastDistanceKm(london, NOWHERE)).toBeNull();
  });

  it('places an address known only by its country at the country\'s centre, with a radius that holds all of it', () => {
    const ip = { country_code: 'US', latitude: null, longitude: null, accuracy_radius_km: null, asn: 7018, is_vpn: null, is_proxy: false, is_tor: false, is_datacenter: false };
    const us = placeOf(ip as never);
    // Honolulu and Anchorage are both within the United States' circle: coarse data cannot make a trip impossible.
    for (const [lat, lon] of [[21.31, -157.86], [61.22, -149.9], [25.76, -80.19], [47.61, -122.33]] as const) {
      expect(greatCircleKm(us.latitude!, us.longitude!, lat, lon)).toBeLessThan(us.radiusKm!);
    }
    // is_vpn unknown and no flag set: not known to be anonymous, nor known not to be.
    expect(us).toMatchObject({ country: 'US', asn: 7018, anonymous: null });
    expect(placeOf({ ...ip, is_vpn: false } as never).anonymous).toBe(false);
    expect(placeOf({ ...ip, is_tor: true } as never).anonymous).toBe(true);
    expect(Object.keys(COUNTRY_EXTENTS).length).toBeGreaterThan(240);
  });

  it('the committed country table is what scripts/country-extents.ts derives', () => {
    expect(readFileSync('src/history/country-extents.ts', 'utf8'), 'run `npx tsx scripts/country-extents.ts`').toBe(countryExtentsSource());
  });
});

describe('identifiers', () => {
  it('are keyed hashes: the secret and the account change them, nothing readable remains', () => {
    const a = keyedHasher(Buffer.alloc(32, 1));
    const b = keyedHasher(Buffer.alloc(32, 2));
    const key = a('acme', 'email', 'jane@example.com');
    expect(key).toHaveLength(16);
    expect(key.toString('latin1')).not.toContain('jane');
    expect(a('globex', 'email', 'jane@example.com').equals(key)).toBe(false);
    expect(b('acme', 'email', 'jane@example.com').equals(key)).toBe(false);
    expect(a('acme', 'email', 'jane@example.com').equals(key)).toBe(true);
  });

  it('hashed again or kept from before, a key is the same HMAC-SHA-256, through both generations of what is kept', () => {
    const secret = Buffer.alloc(32, 3);
    const hash = keyedHasher(secret);
    const hmac = (kind: string, value: string) => createHmac('sha256', secret).update(`acme\u0000${kind}\u0000${value}`).digest().subarray(0, 16);
    const first = hash('acme', 'ip', '81.2.69.160');
    expect(first.equals(hmac('ip', '81.2.69.160'))).toBe(true);
    expect(hash('acme', 'ip', '81.2.69.160')).toBe(first); // kept: the same key, not hashed again
    // Past two generations of devices, the address is hashed again: still the same bytes.
    for (let i = 0; i < 2 * HASHED_KEPT + 1; i++) hash('acme', 'device', `d${i}`);
    expect(hash('acme', 'device', `d${HASHED_KEPT}`).equals(hmac('device', `d${HASHED_KEPT}`))).toBe(true);
    const again = hash('acme', 'ip', '81.2.69.160');
    expect(again).not.toBe(first);
    expect(again.equals(first)).toBe(true);
    // E-mail addresses, user ids (often e-mail addresses too), domains and long values are never kept: hashed each time.
    for (const [kind, value] of [['email', 'jane@example.com'], ['user', 'jane@example.com'], ['domain', 'example.com'], ['device', 'd'.repeat(65)]] as const) {
      expect(hash('acme', kind, value)).not.toBe(hash('acme', kind, value));
      expect(hash('acme', kind, value).equals(hmac(kind, value))).toBe(true);
    }
  });

  it('computed from one-shot hashes, a key is byte for byte the HMAC-SHA-256 of Node, for any secret length and input', () => {
    // Secrets of 32 bytes (the store's), a full block, longer than a block (hashed first, RFC 2104);
    // inputs empty, multi-byte UTF-8 and lone surrogates, the longest the 2,048-byte scratch buffer
    // takes (682 UTF-16 units in all, each up to 3 bytes: 'ユ' is 3) and one past it (the Hmac object's path).
    const fits = Math.floor(2_048 / 3) - 'acme\u0000user\u0000'.length;
    const values = ['', 'jane@example.com', 'Jöhn Dœ 😀 ユーザー', '\ud800x', 'ユ'.repeat(fits), 'ユ'.repeat(fits + 1), 'x'.repeat(2_100), '😀'.repeat(5_000)];
    for (const length of [32, 64, 65, 200]) {
      const secret = Buffer.from(Array.from({ length }, (_, i) => (i * 37 + length) & 0xff));
      const hash = keyedHasher(secret);
      for (const value of values) {
        const expected = createHmac('sha256', secret).update(`acme\u0000user\u0000${value}`).digest().subarray(0, 16);
        const key = hash('acme', 'user', value);
        expect(key.equals(expected), `secret ${length} bytes, value of ${value.length}`).toBe(true);
        // Its own bytes, not a slice of a shared pool a kept key would hold alive.
        expect(key.buffer.byteLength).toBeLessThanOrEqual(32);
      }
      hash.stop();
    }
  });

  it('keeps an address at most two generations of 5 minutes after its last use, however few others come', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-27T06:00:00Z'), toFake: ['Date', 'setInterval', 'clearInterval'] });
    try {
      const hash = keyedHasher(Buffer.alloc(32, 4));
      const first = hash('acme', 'ip', '81.2.69.160');
      vi.advanceTimersByTime(HASHED_FOR_MS);
      expect(hash('acme', 'ip', '81.2.69.160')).toBe(first); // in the older generation, back in the newer
      vi.advanceTimersByTime(HASHED_FOR_MS);
      expect(hash('acme', 'ip', '192.0.2.1')).toBeInstanceOf(Buffer);
      vi.advanceTimersByTime(2 * HASHED_FOR_MS);
      const again = hash('acme', 'ip', '81.2.69.160');
      expect(again).not.toBe(first);
      expect(again.equals(first)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('forgets what it kept on a replica no request reaches any more, and then stops its timer', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-27T06:00:00Z'), toFake: ['Date', 'setInterval', 'clearInterval'] });
    try {
      const hash = keyedHasher(Buffer.alloc(32, 4));
      const first = hash('acme', 'device', 'a'.repeat(64));
      expect(vi.getTimerCount()).toBe(1);
      // No call at all in between: the two generations age out by the timer alone.
      vi.advanceTimersByTime(2 * HASHED_FOR_MS);
      expect(vi.getTimerCount()).toBe(0);
      const again = hash('acme', 'device', 'a'.repeat(64));
      expect(again).not.toBe(first);
      expect(again.equals(first)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
