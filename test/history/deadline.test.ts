import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { historyStatementTimeoutMs } from '../../src/store/history-postgres.js';
import { freshDatabaseUrl } from '../support/store.js';
import { behaviourApp, device, evaluate, MINUTE, testClock } from './fixtures.js';

/**
 * A store that does not answer in time: PostgreSQL with the history tables locked by another
 * session (a long migration, a stuck vacuum), so the history statement waits. The answer comes
 * within HISTORY_TIMEOUT_MS with a partial history (this replica's own counts, lower bounds) and
 * `store` unavailable: ip_velocity fires on what the bound already shows, no other behaviour rule
 * fires on a guess; when the lock goes, history is back, the evaluations answered meanwhile counted once
 * their statements ran. Held past the server's limit for the statement, the statement the client
 * gave up on ends on the server too: a lock stall never piles up backends.
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
    const running = async () => Number((await t!.app.store.engine.db.executeQuery<{ n: string }>(CompiledQuery.raw(
      `select count(*) as n from pg_stat_activity
       where pid <> pg_backend_pid() and datname = current_database() and state = 'active' and application_name = 'risk-evaluation-history'`,
    ))).rows[0]!.n);
    // The evaluation's read (and the writer's batch, if one was due) wait on the lock.
    expect(await running()).toBeGreaterThanOrEqual(1);
    await expect.poll(running, { timeout: historyStatementTimeoutMs(TIMEOUT_MS) + 2_000, interval: 50 }).toBe(0);
    await blocker.query('rollback');
    // Cancelled, so not counted: still seven evaluations' minute counts.
    expect(await minuteCounts()).toBe(14);
    console.log(`history step held by a lock: answered in ${Math.round(took)} ms with a partial history (deadline ${TIMEOUT_MS} ms)`);
  });
});
