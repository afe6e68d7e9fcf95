import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_IN_FLIGHT, READS_IN_FLIGHT } from '../../src/store/history-postgres.js';
import { bearer, KEY_A, type TestApp } from '../support/app.js';
import { freshDatabaseUrl } from '../support/store.js';
import { behaviourApp, device, evaluate, MINUTE, PLACES, testClock } from './fixtures.js';

/**
 * An account farm from one address while PostgreSQL cannot answer (the history tables locked by
 * another session, as deadline.test.ts does): the answers carry this replica's own counts, marked
 * partial, so ip_velocity fires from its threshold on; nothing that only the store knows is guessed.
 * And past KEY_IN_FLIGHT reads in flight for one address, the farm's evaluations wait for one of
 * its own reads to end instead of filling the store's read statements ahead of everyone else: with the store's
 * history when it answers in time, from local counts by the deadline when it does not, and recorded.
 */
const TIMEOUT_MS = 1_500;
const ERASE_TEST_MINUTES = 3;

let t: TestApp;
let url: string;
const clock = testClock();
beforeAll(async () => {
  url = await freshDatabaseUrl('postgres');
  t = await behaviourApp(url, clock, { HISTORY_TIMEOUT_MS: String(TIMEOUT_MS) });
}, 60_000);
afterAll(async () => {
  await t?.app.close();
});

let n = 0;
/** A new person each time, from the farm's one address. */
const farmer = () => {
  n += 1;
  return { event_type: 'account_register', ip: PLACES.sydney, email: `farm${n}@example.com`, user: { user_id: `farm-${n}` }, device_intelligence: { device_hash: device(1_000 + n) } };
};

async function withHistoryLocked<T>(during: () => Promise<T>): Promise<T> {
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table history_counts in access exclusive mode');
    return await during();
  } finally {
    await blocker.query('rollback').catch(() => undefined);
    await blocker.end();
  }
}

/** History reads the server is running now (waiting on the lock). */
const readsRunning = async () => Number((await t.app.store.engine.db.executeQuery<{ n: string }>(CompiledQuery.raw(
  `select count(*) as n from pg_stat_activity
   where datname = current_database() and state = 'active' and application_name = 'risk-evaluation-history' and query like '%pg_current_snapshot()%'`,
))).rows[0]!.n);

const minuteCounts = async () =>
  Number((await t.app.store.engine.db.selectFrom('history_counts').select((eb) => eb.fn.sum<number>('n').as('n')).where('grain', '=', 1).executeTakeFirstOrThrow()).n);

describe('partial history: the store cannot answer', () => {
  it('counts the farm on this replica: ip_velocity fires from its threshold, every other store fact unknown', async () => {
    for (let i = 1; i <= 3; i++) {
      const warm = await evaluate(t, farmer());
      expect(warm.history).toMatchObject({ partial: false, ip: { events_1h: i } });
      expect(warm.rules).toEqual([]);
    }
    await withHistoryLocked(async () => {
      clock.advance(MINUTE);
      // Four events from the address: under ip_velocity's 5, so not enough to fire, and not clean either.
      const fourth = await evaluate(t, farmer());
      expect(fourth.history).toEqual({
        ip: { events_1h: 4, events_24h: 4, accounts_24h: null },
        email: { events_24h: 1, devices_30d: null, first_seen: null },
        device: { events_1h: 1, accounts_30d: null, first_seen: null },
        user: null,
        at_least: ['ip.events_1h', 'ip.events_24h', 'email.events_24h', 'device.events_1h'],
        partial: true,
      });
      expect(fourth.unavailable).toEqual(expect.arrayContaining(['store', 'rule:ip_velocity', 'rule:device_multi_account']));
      expect(fourth.rules).toEqual([]);
      // The fifth meets the threshold from the lower bound alone: fires, and is no longer unknown.
      const fifth = await evaluate(t, farmer());
      expect(fifth.history).toMatchObject({ partial: true, ip: { events_1h: 5 } });
      expect(fifth.rules).toEqual(['Many events from this IP address']);
      expect(fifth.unavailable).toContain('store');
      expect(fifth.unavailable).not.toContain('rule:ip_velocity');
      expect(fifth.unavailable).toContain('rule:device_multi_account');
    });
    // The store answers again: its history, whole, with the locked-out events counted.
    clock.advance(MINUTE);
    await expect.poll(async () => (await evaluate(t, farmer())).history, { timeout: 10_000, interval: 100 })
      .toMatchObject({ partial: false, ip: { accounts_24h: expect.any(Number) }, email: { first_seen: expect.any(String) } });
  });

  it('forgets an erased person\'s e-mail in the local counts too', async () => {
    clock.advance(MINUTE);
    const person = { event_type: 'account_register', ip: PLACES.manchester, email: 'erase.me@example.com' };
    await evaluate(t, person);
    expect((await evaluate(t, person)).history).toMatchObject({ partial: false, email: { events_24h: 2 } });
    const erased = await t.app.inject({ method: 'POST', url: '/v1/risk/erase', headers: bearer(KEY_A), payload: { email: 'erase.me@example.com' } });
    expect(erased.statusCode, erased.body).toBe(200);
    const held = await withHistoryLocked(() => evaluate(t, person));
    // The address is not the person's: its count stays; the e-mail's starts again.
    expect(held.history).toMatchObject({ partial: true, ip: { events_1h: 3 }, email: { events_24h: 1 } });
  });

  it(`past ${KEY_IN_FLIGHT} reads in flight for one address, its next evaluations wait behind its own, not in the pool`, async () => {
    clock.advance(MINUTE);
    const farm = KEY_IN_FLIGHT + 8;
    const { answers, ordinary, running, reading } = await withHistoryLocked(async () => {
      const answers = Array.from({ length: farm }, () => evaluate(t, farmer()));
      // Someone else signing up meanwhile, from their own address.
      const ordinary = evaluate(t, { event_type: 'account_register', ip: PLACES.london, email: 'ordinary@example.com', user: { user_id: 'ordinary' }, device_intelligence: { device_hash: device(7) } });
      // The store's read statements, at most READS_IN_FLIGHT whatever the evaluations: all waiting on the lock.
      await expect.poll(readsRunning, { timeout: 5_000, interval: 20 }).toBe(READS_IN_FLIGHT);
      // The farm's others wait in this replica for one of its own reads to end: the store holds the
      // farm's KEY_IN_FLIGHT and the ordinary one (sent, or waiting for the next statement).
      await expect.poll(() => t.app.store.status().history?.reading, { timeout: 5_000, interval: 20 }).toBe(KEY_IN_FLIGHT + 1);
      // And no more come, though the farm's others wait.
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { answers, ordinary, running: await readsRunning(), reading: t.app.store.status().history?.reading };
    });
    expect(running).toBe(READS_IN_FLIGHT);
    expect(reading).toBe(KEY_IN_FLIGHT + 1);
    // The lock gone well before the deadline: each took its turn and has the store's history.
    const settled = await Promise.all(answers);
    expect((await ordinary).history).toMatchObject({ partial: false, ip: { events_1h: 1 } });
    expect(settled.filter((a) => a.history!.partial)).toEqual([]);
    expect(settled.every((a) => a.rules.includes('Many events from this IP address'))).toBe(true);

    // The store silent past the deadline: those on the server and those waiting their turn alike
    // answer from this replica's counts by then, and are recorded once it is back.
    clock.advance(MINUTE);
    const late = KEY_IN_FLIGHT + 8;
    const { held, ms } = await withHistoryLocked(async () => {
      const started = performance.now();
      const held = await Promise.all(Array.from({ length: late }, () => evaluate(t, farmer())));
      return { held, ms: performance.now() - started };
    });
    expect(held.every((a) => a.history!.partial && a.history!.ip.events_1h >= 5 && a.rules.includes('Many events from this IP address'))).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS * 0.9);
    // Every evaluation of the file recorded, those answered locally included (the IP's and the
    // device's minute each): the farm's and the ordinary sign-up; and the erasure test's three
    // (no device: the address's minute each).
    await expect.poll(minuteCounts, { timeout: 5_000, interval: 50 }).toBe(2 * (n + 1) + ERASE_TEST_MINUTES);
    console.log(`per-key limit: ${farm} farm evaluations through ${KEY_IN_FLIGHT} reads, all with the store's history; ${late} held past the deadline answered partial in ${Math.round(ms)} ms`);
  });
});
