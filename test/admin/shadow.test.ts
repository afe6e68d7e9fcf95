import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, type Session } from '../support/admin.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';
import { compareShadow } from '../../src/backtest/shadow-comparison.js';
import { WITH_EXAMPLE_ORG_RULE } from '../backtest/candidate.js';

/**
 * Shadow rule sets through HTTP with the real app, on both engines: an admin puts the draft in
 * shadow; evaluations with the account's API key answer exactly as without it, while the log row
 * holds the shadow's outcome; the comparison counts exactly the decisions the shadow changes;
 * analysts read but neither start nor stop; a stranger gets the 404 of no account; once stopped,
 * evaluations carry no shadow outcome. Then two replicas: starting and stopping reach the other one
 * at its next poll of the change counter, like a publish.
 */
const RULE_SETS = '/admin/v1/accounts/default/rule-sets/account_register';
const SHADOW = `${RULE_SETS}/shadow`;

describe.each(ENGINES)('shadow rule sets on %s', (engine) => {
  let t: TestApp;
  let admin: Session;
  let analyst: Session;
  let stranger: Session;
  let draftVersion: number;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    await createUser(t.app.store, 'admin@example.com', { roles: { default: 'admin' } });
    await createUser(t.app.store, 'analyst@example.com', { roles: { default: 'analyst' } });
    await createUser(t.app.store, 'stranger@example.com');
    admin = await login(t.app, 'admin@example.com');
    analyst = await login(t.app, 'analyst@example.com');
    stranger = await login(t.app, 'stranger@example.com');
    // The draft adds one rule: sign-ups from example.org decline.
    const draft = await t.app.inject({ method: 'PUT', url: `${RULE_SETS}/draft`, headers: admin.write, payload: { yaml: WITH_EXAMPLE_ORG_RULE } });
    expect(draft.statusCode, draft.body).toBe(200);
    draftVersion = draft.json().version;
  });
  afterAll(async () => {
    await t?.app.close();
  });

  const evaluate = async (email: string, ip: string) => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ email, ip }) });
    expect(response.statusCode, response.body).toBe(200);
    return response;
  };
  const loggedShadow = async (id: string) => {
    await t.app.store.log.flush();
    const row = await t.app.store.engine.db.selectFrom('evaluations').select(['state', 'shadow']).where('id', '=', id).executeTakeFirstOrThrow();
    return { state: row.state, shadow: typeof row.shadow === 'string' ? JSON.parse(row.shadow) : row.shadow };
  };
  /** The answer without what differs from one call to the next whatever the rules (id, times, the history counting this call). */
  const stable = (body: Record<string, unknown>) => {
    const { id: _id, evaluated_at: _at, took_ms: _took, history: _history, ...rest } = body;
    return rest;
  };

  it('runs the draft beside the live set, answers as without it, and logs the shadow outcome', async () => {
    const before = await evaluate('ann@example.org', '203.0.113.1');
    expect((await loggedShadow(before.json().id)).shadow).toBeNull();
    expectAdminProblem(await t.app.inject({ method: 'GET', url: SHADOW, headers: analyst.read }), 404, 'resource_not_found');

    const started = await t.app.inject({ method: 'POST', url: SHADOW, headers: admin.write, payload: {} });
    expect(started.statusCode, started.body).toBe(200);
    expect(started.json()).toMatchObject({ event_type: 'account_register', version: draftVersion, yaml: WITH_EXAMPLE_ORG_RULE, started_by: expect.stringMatching(/^user:usr_/) });
    expect((await t.app.inject({ method: 'GET', url: SHADOW, headers: analyst.read })).json()).toEqual(started.json());

    const after = await evaluate('ann@example.org', '203.0.113.1');
    expect(Object.keys(after.json())).toEqual(Object.keys(before.json()));
    expect(stable(after.json())).toEqual(stable(before.json()));
    expect(after.body).not.toContain('shadow');
    expect(after.body).not.toContain('example_org');
    expect(after.json().score.state).toBe('approve');

    const logged = await loggedShadow(after.json().id);
    expect(logged.state).toBe('approve');
    expect(logged.shadow).toEqual({
      version: draftVersion, fraud_score: 40, state: 'decline', fired: ['example_org'],
      details: [{ rule_id: 'example_org', rule_name: 'Sign-up from example.org', rule_type: 'static', score: 40 }], dry_run: [],
    });
    // The decision shows it to analysts beside the live outcome.
    const decision = await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/${after.json().id}`, headers: analyst.read });
    expect(decision.json()).toMatchObject({ state: 'approve', shadow: logged.shadow });
    const audit = await t.app.store.audit({ account: 'default' });
    expect(audit.find((a) => a.action === 'rule_set.shadow.start')).toMatchObject({ target: 'account_register', actor: started.json().started_by, after: { version: draftVersion } });
  });

  it('compares live with shadow over exactly the evaluations that carry a shadow outcome', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const changed = [(await evaluate('bob@example.org', '203.0.113.2')).json().id];
    await evaluate('cat@example.com', '203.0.113.3');
    await evaluate('dan@example.com', '203.0.113.4');
    changed.push((await evaluate('eve@example.org', '203.0.113.5')).json().id);
    await t.app.store.log.flush();

    const response = await t.app.inject({ method: 'GET', url: `${SHADOW}/comparison?since=${since}`, headers: analyst.read });
    expect(response.statusCode, response.body).toBe(200);
    const report = response.json();
    // Five with a shadow outcome (the first test's, and these four); the one logged before the shadow is not among them.
    expect(report).toMatchObject({
      evaluations: 5, replayed: 5, truncated: false, shadow_versions: [{ version: draftVersion, evaluations: 5 }],
      changed: { state: 3, score: 3 },
      transitions: { approve: { approve: 2, review: 0, decline: 3 }, review: { approve: 0, review: 0, decline: 0 }, decline: { approve: 0, review: 0, decline: 0 } },
    });
    expect(report.sample.map((s: { id: string }) => s.id).slice(1)).toEqual(changed);
    expect(report.sample[1]).toMatchObject({ live: { state: 'approve', fraud_score: 0 }, candidate: { state: 'decline', fraud_score: 40 }, rules_added: ['Sign-up from example.org'], rules_removed: [] });
    expect(report.rules.find((r: { rule_name: string }) => r.rule_name === 'Sign-up from example.org')).toEqual({
      rule_name: 'Sign-up from example.org', live: { hits: 0, dry_run_hits: 0, score: 0 }, candidate: { hits: 3, dry_run_hits: 0, score: 120 },
    });

    // Bounded: a call that stops early says where, and the range from there holds the rest, none twice.
    const scope = { account: 'default', eventType: 'account_register', since: Date.parse(since), until: Date.now() + 1 };
    const first = await compareShadow(t.app.store.engine.db, scope, { maxCompared: 2, pageSize: 2 });
    expect(first.truncated).toBe(true);
    const rest = await compareShadow(t.app.store.engine.db, { ...scope, since: Date.parse(first.until) }, { pageSize: 2 });
    expect(rest.truncated).toBe(false);
    expect(first.evaluations + rest.evaluations).toBe(5);
    expect([...first.sample, ...rest.sample].map((s) => s.id)).toEqual(report.sample.map((s: { id: string }) => s.id));

    const later = await t.app.inject({ method: 'GET', url: `${SHADOW}/comparison?since=1m&until=${encodeURIComponent(since)}`, headers: analyst.read });
    expectAdminProblem(later, 400, 'invalid_request');
    expect(later.json().errors[0].path).toBe('until');
  });

  it('lets analysts read but not start or stop a shadow, and answers a stranger as for no account', async () => {
    expectAdminProblem(await t.app.inject({ method: 'POST', url: SHADOW, headers: analyst.write, payload: {} }), 403, 'forbidden');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: SHADOW, headers: analyst.write }), 403, 'forbidden');
    expect((await t.app.inject({ method: 'GET', url: `${SHADOW}/comparison?since=1h`, headers: analyst.read })).statusCode).toBe(200);
    for (const request of [{ method: 'GET' as const, url: SHADOW }, { method: 'POST' as const, url: SHADOW, payload: {} }, { method: 'GET' as const, url: `${SHADOW}/comparison?since=1h` }]) {
      const response = await t.app.inject({ ...request, headers: stranger.write });
      expectAdminProblem(response, 404, 'resource_not_found');
      expect(response.json().detail).toBe('no account "default"');
    }
  });

  it('refuses a version that does not exist, and bad input naming the field', async () => {
    expectAdminProblem(await t.app.inject({ method: 'POST', url: SHADOW, headers: admin.write, payload: { version: 999 } }), 404, 'resource_not_found');
    const bad = await t.app.inject({ method: 'POST', url: SHADOW, headers: admin.write, payload: { version: 'x' } });
    expectAdminProblem(bad, 400, 'invalid_request');
    expect(bad.json().errors[0].path).toBe('version');
    const since = await t.app.inject({ method: 'GET', url: `${SHADOW}/comparison?since=yesterday`, headers: analyst.read });
    expectAdminProblem(since, 400, 'invalid_request');
    expect(since.json().errors[0].path).toBe('since');
  });

  it('stops: the next evaluations carry no shadow outcome', async () => {
    const stopped = await t.app.inject({ method: 'DELETE', url: SHADOW, headers: admin.write });
    expect(stopped.statusCode, stopped.body).toBe(204);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: SHADOW, headers: analyst.read }), 404, 'resource_not_found');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: SHADOW, headers: admin.write }), 404, 'resource_not_found');
    const after = await evaluate('fay@example.org', '203.0.113.6');
    expect(await loggedShadow(after.json().id)).toEqual({ state: 'approve', shadow: null });
    expect((await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/${after.json().id}`, headers: analyst.read })).json().shadow).toBeNull();
    const audit = await t.app.store.audit({ account: 'default' });
    expect(audit.find((a) => a.action === 'rule_set.shadow.stop')).toMatchObject({ target: 'account_register', before: { version: draftVersion }, after: null });
  });
});

describe('a shadow on two replicas of one PostgreSQL', () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    const url = await freshDatabaseUrl('postgres');
    // A long poll interval: the second replica reloads when the test says, as its timer would.
    [one, two] = [await startTestApp({ DATABASE_URL: url, RELOAD_INTERVAL_MS: '600000' }), await startTestApp({ DATABASE_URL: url, RELOAD_INTERVAL_MS: '600000' })];
  });
  afterAll(async () => {
    await Promise.all([one?.app.close(), two?.app.close()]);
  });

  const shadowOfEvaluation = async (app: TestApp['app']) => {
    const response = await app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ email: 'gus@example.org' }) });
    expect(response.statusCode, response.body).toBe(200);
    await app.store.log.flush();
    const row = await app.store.engine.db.selectFrom('evaluations').select('shadow').where('id', '=', response.json().id).executeTakeFirstOrThrow();
    return row.shadow as { version: number; state: string } | null;
  };

  it('starts and stops on the other replica at its next poll of the change counter', async () => {
    const draft = await one.app.store.ruleSets.saveDraft('default', { eventType: 'account_register', yaml: WITH_EXAMPLE_ORG_RULE }, { actor: 'test', comment: null });
    await one.app.store.shadows.start('default', 'account_register', undefined, { actor: 'test' });
    expect(await shadowOfEvaluation(two.app)).toBeNull();
    await two.app.reloadConfiguration();
    expect(await shadowOfEvaluation(two.app)).toMatchObject({ version: draft.version, state: 'decline' });

    await one.app.store.shadows.stop('default', 'account_register', { actor: 'test' });
    await two.app.reloadConfiguration();
    expect(await shadowOfEvaluation(two.app)).toBeNull();
  });
});
