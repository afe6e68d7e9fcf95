import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { startLoad } from '../support/load.js';
import { historyStatementTimeoutMs, WRITER_NAME } from '../../src/store/history-postgres.js';
import { freshDatabaseUrl } from '../support/store.js';
import { behaviourApp, behaviourDataDir, device, evaluate, MINUTE, PLACES, testClock } from './fixtures.js';

/**
 * A store that does not answer in time: PostgreSQL with the history tables locked by another
 * session (a long migration, a stuck vacuum), so the history statement waits. The answer comes
 * within HISTORY_TIMEOUT_MS with a partial history (this replica's own counts, lower bounds) and
 * `store` unavailable: ip_velocity fires on what the bound already shows, no other behaviour rule
 * fires on a guess; when the lock goes, history is back, the evaluations answered meanwhile counted once
 * their statements ran. Held past the server's limit for the statement, the statement the client
 * gave up on ends on the server too: a lock stall never piles up backends; its event is recorded
 * all the same, as are those answered while the failed read had the store marked down, and the
 * writer (one connection, a longer limit) writes them once the lock goes: an account farm loses
 * none of its events to a stall.
 */
/** Short enough to show the deadline, long enough that the warm-up's first statements (a new
 * connection, a first plan: 150–250 ms on a loaded 2-core runner) are not cut off by it. */
const TIMEOUT_MS = 400;
/** Generous: the client, the service and PostgreSQL share a 2-core machine with other tests. */
const ANSWER_BOUND_MS = TIMEOUT_MS + 1_500;

let t: TestApp | undefined;
let blocker: pg.Client | undefined;
afterEach(async () => {
  await blocker?.end().catch(() => undefined);
  await t?.app.close();
  t = blocker = undefined;
});

describe('the history step under its deadline', () => {
  it('answers from local counts while the store is held still, and with the store\'s history after', async () => {
    const url = await freshDatabaseUrl('postgres');
    const clock = testClock();
    t = await behaviourApp(url, clock, { HISTORY_TIMEOUT_MS: String(TIMEOUT_MS) });
    const body = { event_type: 'account_register', user: { user_id: 'held' }, device_intelligence: { device_hash: device(5) } };
    for (let i = 0; i < 5; i++) {
      // Warm: the statement is planned on the pooled connections before the lock.
      expect((await evaluate(t, body)).history).not.toBeNull();
      clock.advance(MINUTE);
    }

    blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('lock table history_counts in access exclusive mode');

    const started = performance.now();
    const held = await evaluate(t, body);
    const took = performance.now() - started;
    expect(took).toBeLessThan(ANSWER_BOUND_MS);
    expect(held.history).toMatchObject({ partial: true, ip: { events_1h: 6, accounts_24h: null }, device: { events_1h: 6, accounts_30d: null }, user: null });
    expect(held.unavailable).toContain('store');
    // Six events from this address in the hour, this replica's own: at least ip_velocity's 5, so it
    // fires; the device's accounts and the user's facts are the store's: unknown, and said so.
    expect(held.rules).toEqual(['Many events from this IP address']);
    expect(held.unavailable).toEqual(expect.arrayContaining(['rule:device_multi_account']));
    expect(held.unavailable).not.toContain('rule:ip_velocity');

    await blocker.query('rollback');
    clock.advance(MINUTE);
    const after = await evaluate(t, body);
    expect(after.history).toMatchObject({ partial: false });
    expect(after.unavailable).not.toContain('store');
    // The held evaluation's statement runs once the lock goes, beside this one's (so this one's read
    // may predate it): seven evaluations in the end, each a minute count for the IP and one for the device.
    const minuteCounts = async () =>
      Number((await t!.app.store.engine.db.selectFrom('history_counts').select((eb) => eb.fn.sum<number>('n').as('n')).where('grain', '=', 1).executeTakeFirstOrThrow()).n);
    await expect.poll(minuteCounts, { timeout: 5_000, interval: 20 }).toBe(14);

    // Held past the server's limit: the statement is cancelled there, not left waiting on the lock.
    await blocker.query('begin');
    await blocker.query('lock table history_counts in access exclusive mode');
    clock.advance(MINUTE);
    expect((await evaluate(t, body)).history?.partial).toBe(true);
    // Asked outside the blocker's transaction, which would see one snapshot of pg_stat_activity.
    const activeAs = async (name: string) => Number((await t!.app.store.engine.db.executeQuery<{ n: string }>(CompiledQuery.raw(
      `select count(*) as n from pg_stat_activity
       where pid <> pg_backend_pid() and datname = current_database() and state = 'active' and application_name = '${name}'`,
    ))).rows[0]!.n);
    const running = () => activeAs('risk-evaluation-history');
    // The evaluation's read waits on the lock; cancelled there at its limit.
    expect(await running()).toBeGreaterThanOrEqual(1);
    await expect.poll(running, { timeout: historyStatementTimeoutMs(TIMEOUT_MS) + 2_000, interval: 50 }).toBe(0);
    // Its event is recorded all the same: the writer's batch waits on the lock (under its own name,
    // with its own, longer limit: one connection, never a pile), and is written once the lock goes.
    await expect.poll(() => activeAs(WRITER_NAME), { timeout: 2_000, interval: 20 }).toBe(1);
    // An evaluation meanwhile answers partial (the store marked down by the failed read until the
    // next probe, or its own read held again), and is recorded all the same.
    clock.advance(MINUTE);
    expect((await evaluate(t, body)).history?.partial).toBe(true);
    await blocker.query('rollback');
    await expect.poll(minuteCounts, { timeout: 5_000, interval: 20 }).toBe(18);
    expect(t.app.store.status().history).toMatchObject({ failed: 0 });
    console.log(`history step held by a lock: answered in ${Math.round(took)} ms with a partial history (deadline ${TIMEOUT_MS} ms)`);
  });

  it('records the evaluations answered while the store is marked down, and counts them once it is back', async () => {
    const url = await freshDatabaseUrl('postgres');
    const clock = testClock();
    // No probe in the test's time: the store stays marked down until the test says it is up.
    t = await behaviourApp(url, clock, { HISTORY_TIMEOUT_MS: String(TIMEOUT_MS), RELOAD_INTERVAL_MS: '600000' });
    const body = { event_type: 'account_register', user: { user_id: 'while-down' }, device_intelligence: { device_hash: device(6) } };
    expect((await evaluate(t, body)).history?.ip.events_1h).toBe(1);
    // A failed read, write or probe marks it down (the probe marks it up again).
    t.app.store.health.down(new Error('the history read was cancelled'));
    for (let i = 0; i < 3; i++) {
      const down = await evaluate(t, body);
      expect(down.history).toMatchObject({ partial: true, ip: { events_1h: 2 + i } });
      expect(down.unavailable).toContain('store');
    }
    t.app.store.health.up();
    await expect.poll(() => t!.app.store.status().history!.pending, { timeout: 5_000, interval: 10 }).toBe(0);
    const after = await evaluate(t, body);
    // The one before, the three answered while it was down, and this one.
    expect(after.history).toMatchObject({ partial: false, ip: { events_1h: 5 }, device: { events_1h: 5 } });
    expect(t.app.store.status().history).toMatchObject({ failed: 0, refused: 0 });
  });

  it('loses no event of an account farm through a stall past the statement\'s limit', async () => {
    const url = await freshDatabaseUrl('postgres');
    t = await startTestApp({ DATABASE_URL: url, DATA_DIR: behaviourDataDir(), HISTORY_TIMEOUT_MS: String(TIMEOUT_MS), RATE_LIMIT_MAX: '0' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    const run = Date.now().toString(36);
    let stop = false;
    const farm = startLoad({
      url: base, workers: 16, until: () => stop,
      request: (n) => ({
        path: '/v1/risk/evaluate', key: KEY_A,
        body: { ip: PLACES.sydney, email: `stalled${n}.${run}@example.com`, event_type: 'account_register', user: { user_id: `stalled-${run}-${n}` }, device_intelligence: { device_hash: device(9_000_000 + n) } },
      }),
    });
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await pause(700);
    // The counters locked past the reads' limit (5 × the deadline): the statements out are cancelled
    // by the server, the store is marked down until its next probe, and the writer's batch waits.
    blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('lock table history_counts in access exclusive mode');
    await pause(historyStatementTimeoutMs(TIMEOUT_MS) + 500);
    await blocker.query('rollback');
    await pause(700);
    stop = true;
    const figures = await farm.done;
    expect(figures.outcomes).toEqual({ 200: figures.sent });
    const settled = () => {
      const h = t!.app.store.status().history!;
      return h.pending! + h.reading!;
    };
    await expect.poll(settled, { timeout: 15_000, interval: 20 }).toBe(0);
    // The failed reads marked the store down: up again at its next probe (RELOAD_INTERVAL_MS).
    await expect.poll(() => t!.app.store.health.available, { timeout: 5_000, interval: 20 }).toBe(true);
    // Every one of the farm's events, and this one.
    const after = await evaluate(t, { ip: PLACES.sydney, email: `stalled-after.${run}@example.com`, event_type: 'account_register', user: { user_id: `stalled-after-${run}` } });
    expect(after.history).toMatchObject({ partial: false, ip: { events_1h: figures.sent + 1 } });
    expect(t.app.store.status().history).toMatchObject({ failed: 0, refused: 0 });
    console.log(`a ${historyStatementTimeoutMs(TIMEOUT_MS) + 500} ms stall under an account farm: ${figures.sent} evaluations, every one counted`);
  }, 40_000);
});
