import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BacktestConflict, BacktestJobs } from '../../src/backtest/jobs.js';
import { runBacktestInWorker } from '../../src/backtest/worker.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, type Session } from '../support/admin.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';
import { LIVE_RULES, WITH_EXAMPLE_ORG_RULE } from './candidate.js';

/**
 * Backtests through the admin API on both engines: an admin starts one (202) on a rule file or a
 * stored version, it runs in its worker and its report is read back (from the row any replica
 * reads); analysts read but neither start nor cancel; a stranger gets the 404 of an account that
 * does not exist; bad input is a 400 naming the field; starting and cancelling are audited. Then
 * the job bounds (one running per account, cancel) and the worker's cancel.
 */
const URL = '/admin/v1/accounts/default/rule-sets/account_register/backtests';

describe.each(ENGINES)('backtests through the admin API on %s', (engine) => {
  let t: TestApp;
  let admin: Session;
  let analyst: Session;
  let stranger: Session;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    for (const [n, email] of ['a@example.org', 'b@example.com'].entries()) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ ip: `203.0.113.${n + 1}`, email }) });
      expect(response.statusCode).toBe(200);
    }
    await t.app.store.log.flush();
    await createUser(t.app.store, 'admin@example.com', { roles: { default: 'admin' } });
    await createUser(t.app.store, 'analyst@example.com', { roles: { default: 'analyst' } });
    await createUser(t.app.store, 'stranger@example.com');
    admin = await login(t.app, 'admin@example.com');
    analyst = await login(t.app, 'analyst@example.com');
    stranger = await login(t.app, 'stranger@example.com');
  });
  afterAll(async () => {
    await t?.app.close();
  });

  const finished = async (id: string, session: Session = analyst) => {
    await expect.poll(async () => (await t.app.inject({ method: 'GET', url: `${URL}/${id}`, headers: session.read })).json().status, { timeout: 15_000, interval: 50 }).not.toBe('running');
    return (await t.app.inject({ method: 'GET', url: `${URL}/${id}`, headers: session.read })).json();
  };

  it('starts a backtest for an admin, runs it off the request path, and keeps its report for every reader', async () => {
    const started = await t.app.inject({ method: 'POST', url: URL, headers: admin.write, payload: { yaml: WITH_EXAMPLE_ORG_RULE, since: '1h' } });
    expect(started.statusCode, started.body).toBe(202);
    expect(started.json()).toMatchObject({ id: expect.stringMatching(/^bt_[0-9a-f]{16}$/), status: 'running', event_type: 'account_register', created_by: expect.stringMatching(/^user:usr_/) });

    const done = await finished(started.json().id);
    expect(done).toMatchObject({ status: 'done', yaml: WITH_EXAMPLE_ORG_RULE, progress: { evaluations: 2, replayed: 2, skipped: 0 }, error: null });
    expect(done.report).toMatchObject({ evaluations: 2, changed: { state: 1 }, transitions: { approve: { approve: 1, decline: 1 } } });
    expect(done.report.sample).toHaveLength(1);

    const list = await t.app.inject({ method: 'GET', url: URL, headers: analyst.read });
    expect(list.json().backtests.map((b: { id: string }) => b.id)).toContain(started.json().id);
    const audit = await t.app.store.audit({ account: 'default' });
    expect(audit.find((a) => a.action === 'backtest.start' && a.target === started.json().id)).toMatchObject({ actor: started.json().created_by });
  });

  it('backtests a stored version by its number', async () => {
    const draft = await t.app.store.ruleSets.saveDraft('default', { eventType: 'account_register', yaml: WITH_EXAMPLE_ORG_RULE }, { actor: 'test', comment: null });
    const started = await t.app.inject({ method: 'POST', url: URL, headers: admin.write, payload: { version: draft.version, since: new Date(Date.now() - 3_600_000).toISOString() } });
    expect(started.statusCode, started.body).toBe(202);
    expect(await finished(started.json().id)).toMatchObject({ status: 'done', rule_set_version: draft.version, report: { changed: { state: 1 } } });
    expectAdminProblem(await t.app.inject({ method: 'POST', url: URL, headers: admin.write, payload: { version: 999, since: '1h' } }), 404, 'resource_not_found');
  });

  it('lets analysts read but not start or cancel, and answers a stranger as for no account', async () => {
    expectAdminProblem(await t.app.inject({ method: 'POST', url: URL, headers: analyst.write, payload: { yaml: LIVE_RULES, since: '1h' } }), 403, 'forbidden');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `${URL}/bt_0000000000000000`, headers: analyst.write }), 403, 'forbidden');
    expect((await t.app.inject({ method: 'GET', url: URL, headers: analyst.read })).statusCode).toBe(200);
    const strangers = await t.app.inject({ method: 'GET', url: URL, headers: stranger.read });
    const none = await t.app.inject({ method: 'GET', url: URL.replace('/default/', '/nosuch/'), headers: stranger.read });
    expectAdminProblem(strangers, 404, 'resource_not_found');
    expect(strangers.json().detail).toBe('no account "default"');
    expect(none.json().detail).toBe('no account "nosuch"');
    expectAdminProblem(await t.app.inject({ method: 'POST', url: URL, headers: stranger.write, payload: { yaml: LIVE_RULES, since: '1h' } }), 404, 'resource_not_found');
    expectAdminProblem(await t.app.inject({ method: 'POST', url: URL, payload: { yaml: LIVE_RULES, since: '1h' } }), 401, 'unauthenticated');
    // The session cookie without its CSRF token.
    expectAdminProblem(await t.app.inject({ method: 'POST', url: URL, headers: admin.read, payload: { yaml: LIVE_RULES, since: '1h' } }), 403, 'csrf_failed');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: `${URL}/bt_0000000000000000`, headers: analyst.read }), 404, 'resource_not_found');
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const field = async (payload: unknown) => {
      const response = await t.app.inject({ method: 'POST', url: URL, headers: admin.write, payload: payload as object });
      expectAdminProblem(response, 400, 'invalid_request');
      return response.json().errors as Array<{ path: string; message: string }>;
    };
    expect(await field({ yaml: 'rules:\n  - library: no_such_rule\n', since: '1h' })).toEqual([expect.objectContaining({ path: 'yaml', message: expect.stringMatching(/^rules\[0\]\.library \(line 2, column \d+\): /) })]);
    expect((await field({ yaml: LIVE_RULES, since: 'last tuesday' }))[0]!.path).toBe('since');
    expect((await field({ yaml: LIVE_RULES, since: '1h', until: '2h' }))[0]!.path).toBe('until');
    expect((await field({ yaml: LIVE_RULES, version: 1, since: '1h' }))[0]!.message).toContain('one of the two');
    expect((await field({ yaml: LIVE_RULES }))[0]!.path).toBe('since');
  });
});

describe('backtest jobs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.app.close();
  });

  it('runs one backtest per account at a time, and a cancel stops it and is audited', async () => {
    // A worker that runs until it is stopped, behind the worker's interface: the real one finishes too soon to be caught running.
    const untilAborted: typeof runBacktestInWorker = (_job, options) => new Promise((_resolve, reject) => {
      const signal = options!.signal!;
      signal.addEventListener('abort', () => reject(signal.reason));
    });
    const jobs = new BacktestJobs(t.app.store.engine, { logger: pino({ level: 'silent' }), now: Date.now, run: untilAborted });
    const ask = { account: 'default', eventType: 'account_register', since: 0, until: Date.now(), yaml: LIVE_RULES, ruleSetVersion: null };
    const first = await jobs.start(ask, { actor: 'test' });
    await expect(jobs.start(ask, { actor: 'test' })).rejects.toBeInstanceOf(BacktestConflict);

    const cancelled = await jobs.cancel('default', 'account_register', first.id, { actor: 'user:canceller' });
    expect(cancelled).toMatchObject({ status: 'cancelled', finished_at: expect.any(Number) });
    await expect(jobs.cancel('default', 'account_register', first.id, { actor: 'test' })).rejects.toThrow(/already ended \(cancelled\)/);
    expect((await t.app.store.audit({ account: 'default' })).find((a) => a.action === 'backtest.cancel')).toMatchObject({ actor: 'user:canceller', target: first.id });

    // The account is free again; closing the service cancels what still runs, and says so.
    const second = await jobs.start(ask, { actor: 'test' });
    await jobs.close();
    expect(await jobs.get('default', 'account_register', second.id)).toMatchObject({ status: 'cancelled', error: 'the service stopped while it ran' });
  });

  it('stops the worker thread on cancel, and refuses a rule file that does not load with its problems', async () => {
    const job = { database: t.config.database, scope: { account: 'default', eventType: 'account_register', since: 0, until: Date.now() }, yaml: LIVE_RULES };
    const controller = new AbortController();
    const running = runBacktestInWorker(job, { signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(running).rejects.toThrow('stop');
    await expect(runBacktestInWorker({ ...job, yaml: 'rules: 3\n' })).rejects.toThrow(/Invalid rule set/);
    await expect(runBacktestInWorker(job)).resolves.toMatchObject({ evaluations: 0 });
  });
});
