import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { failures, startLoad, type Answer } from '../support/load.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';

/**
 * PostgreSQL stopped as a crash stops it, under load, then started again. Degraded, never down:
 * every evaluation is answered, within the deadline, with `store` in `unavailable` once the
 * service has seen the store go; keys and rule sets keep serving from memory; readiness says
 * so; and when the store is back the service uses it again without a restart.
 */
const DEADLINE_MS = 200;
/** Generous: the client, the service and PostgreSQL share a 2-core CI runner. */
const ANSWER_BOUND_MS = DEADLINE_MS + 1_500;
const WORKERS = 8;

let postgres: PostgresServer;
let t: TestApp | undefined;
beforeAll(async () => {
  // Its own server: stopping the run's shared one would fail every other test file.
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await t?.app.close();
  await postgres?.close();
});

describe('the store killed under load', () => {
  it('answers every evaluation, says the store is unavailable, and recovers on its own', async () => {
    // The history step's own deadline is tested with a store held still (test/history/deadline.test.ts);
    // here the step gets as long as an answer may take before the stop, on two busy cores. The 8
    // workers rotate over 16 addresses: one address past its reads in flight (KEY_IN_FLIGHT, 64)
    // would answer from local counts by design (test/history/partial.test.ts), and "before" means the store answering.
    t = await startTestApp({ DATABASE_URL: await postgres.createDatabase(), DNS_TIMEOUT_MS: String(DEADLINE_MS), RELOAD_INTERVAL_MS: '100', HISTORY_TIMEOUT_MS: '1000' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const storeStatus = () => t!.app.sources().find((s) => s.name === 'store')!;

    let phase: 'before' | 'down' | 'after' = 'before';
    let sent = 0;
    let stop = false;
    const seen = { before: { store: 0, clean: 0, slowest: 0 }, down: { store: 0, clean: 0, slowest: 0 }, after: { store: 0, clean: 0, slowest: 0 } };
    const slow: string[] = [];
    const historyMismatch: string[] = [];
    const load = startLoad({
      url: `http://127.0.0.1:${port}`,
      workers: WORKERS,
      until: () => stop,
      request: () => ({ path: '/v1/risk/evaluate', key: KEY_A, body: evaluationBody({ ip: `203.0.113.${(sent++ % 16) + 1}` }) }),
      inspect: (answer: Answer) => {
        if (answer.status !== 200) return;
        if (answer.ms > ANSWER_BOUND_MS) slow.push(`${phase}: ${Math.round(answer.ms)} ms`);
        seen[phase].slowest = Math.max(seen[phase].slowest, Math.round(answer.ms));
        const { unavailable, history } = answer.body as { unavailable: string[]; history: { partial: boolean } | null };
        seen[phase][unavailable.includes('store') ? 'store' : 'clean'] += 1;
        // History comes from the store, or is this replica's own counts and says so (partial): never a stale guess.
        if (history === null || unavailable.includes('store') !== history.partial) historyMismatch.push(`${phase}: store ${unavailable.includes('store') ? 'unavailable' : 'available'}, history ${JSON.stringify(history)}`);
      },
    });

    await expect.poll(() => seen.before.clean, { timeout: 20_000, interval: 20 }).toBeGreaterThan(4 * WORKERS);
    await expect.poll(() => t!.app.store.log.stats().written, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);

    // The phase first: answers that notice the stop may arrive before pg_ctl returns.
    phase = 'down';
    await postgres.stop();
    await expect.poll(() => seen.down.store, { timeout: 10_000, interval: 20 }).toBeGreaterThan(4 * WORKERS);
    expect(storeStatus()).toMatchObject({ loaded: false, error: expect.any(String) });
    // Still ready (evaluations answer), and the public probe names what is missing, nothing more.
    const readyWhileDown = await t.app.inject('/readyz');
    expect(readyWhileDown.statusCode).toBe(200);
    expect(readyWhileDown.json()).toEqual({ status: 'ready', unavailable: ['store'] });
    const writtenWhileDown = t.app.store.log.stats().written;

    await postgres.start();
    phase = 'after';
    await expect.poll(() => seen.after.clean, { timeout: 20_000, interval: 20 }).toBeGreaterThan(4 * WORKERS);
    await expect.poll(() => t!.app.store.log.stats().written, { timeout: 10_000, interval: 20 }).toBeGreaterThan(writtenWhileDown);
    stop = true;
    const figures = await load.done;

    expect(failures(figures)).toEqual({});
    expect(figures.noResponse).toEqual([]);
    expect(slow).toEqual([]);
    expect(historyMismatch).toEqual([]);
    expect(seen.before.store).toBe(0);
    expect(storeStatus()).toMatchObject({ loaded: true, error: null });
    expect((await t.app.inject('/readyz')).json()).toEqual({ status: 'ready', unavailable: [] });
    const log = t.app.store.log.stats();
    // Memory stayed bounded: what could not be written was dropped and counted, not kept.
    expect(log.queued).toBeLessThanOrEqual(20_000);
    const warned = t.logs.lines.filter((l) => l.msg === 'store unavailable: evaluations answer without it, configuration serves from memory');
    expect(warned).toHaveLength(1);
    expect(t.logs.lines.some((l) => l.msg === 'store available again')).toBe(true);
    console.log(
      `store down under load: ${figures.sent} evaluations, 0 failed, slowest ${seen.before.slowest} ms before, ${seen.down.slowest} ms while down, ${seen.after.slowest} ms after; ` +
        `before ${seen.before.clean}, while down ${seen.down.store} with "store" unavailable (${seen.down.clean} before it was noticed), after ${seen.after.clean} clean; ` +
        `log written ${log.written}, dropped ${log.dropped}, failed ${log.failed}`,
    );
  }, 90_000);
});
