import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, type Session } from '../support/admin.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * The audit log through the API (per account for its admins, instance-wide for owners, paged, never
 * a secret) and what /readyz does not show publicly (data sources for members, health for owners).
 */
describe.each(ENGINES)('the audit log and health on %s', (engine: EngineName) => {
  let t: TestApp;
  let owner: Session;
  let adminA: Session;
  let analystA: Session;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    owner = await login(t.app, 'owner@example.com');
    for (const id of ['alpha', 'beta']) await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: owner.write, payload: { id } });
    await createUser(t.app.store, 'admin.a@example.com', { roles: { alpha: 'admin' } });
    await createUser(t.app.store, 'analyst.a@example.com', { roles: { alpha: 'analyst' } });
    adminA = await login(t.app, 'admin.a@example.com');
    analystA = await login(t.app, 'analyst.a@example.com');
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('shows an account\'s admins its entries only, newest first, page by page, with no key in them', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 2; i++) keys.push((await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: adminA.write })).json().key);
    await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/beta/keys', headers: owner.write });
    const first = (await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/audit?limit=2', headers: adminA.read })).json();
    expect(first.entries.map((e: { action: string; account_id: string }) => [e.action, e.account_id])).toEqual([['key.create', 'alpha'], ['key.create', 'alpha']]);
    expect(first.entries[0]).toMatchObject({ actor: expect.stringMatching(/^user:usr_/), at: expect.stringMatching(/Z$/), before: null, after: { account_id: 'alpha' } });
    const rest = (await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/alpha/audit?before=${first.next_before}`, headers: adminA.read })).json();
    expect(rest.entries.map((e: { action: string }) => e.action)).toEqual(['membership.create', 'membership.create', 'account.create']);
    expect(rest.next_before).toBeNull();
    for (const key of keys) expect(JSON.stringify([first, rest])).not.toContain(key);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/audit?limit=0', headers: adminA.read }), 400, 'invalid_request');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/beta/audit', headers: adminA.read }), 404, 'resource_not_found');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/audit', headers: analystA.read }), 403, 'forbidden');
  });

  it('shows owners the whole instance\'s log, or one account\'s', async () => {
    const all = (await t.app.inject({ method: 'GET', url: '/admin/v1/audit', headers: owner.read })).json().entries as Array<{ account_id: string | null }>;
    // Users are the instance's: their entries belong to no account.
    expect(new Set(all.map((e) => e.account_id))).toEqual(new Set(['alpha', 'beta', 'default', null]));
    const beta = (await t.app.inject({ method: 'GET', url: '/admin/v1/audit?account=beta', headers: owner.read })).json().entries as Array<{ account_id: string }>;
    expect(beta.length).toBeGreaterThan(0);
    expect(beta.every((e) => e.account_id === 'beta')).toBe(true);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/audit', headers: adminA.read }), 403, 'forbidden');
  });

  it('shows members the data sources, and owners the store, its log counters, every source and the process', async () => {
    const sources = (await t.app.inject({ method: 'GET', url: '/admin/v1/sources', headers: analystA.read })).json().sources as Array<{ name: string }>;
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.every((s) => /^(email|ip)\./.test(s.name))).toBe(true);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/health', headers: adminA.read }), 403, 'forbidden');
    const health = (await t.app.inject({ method: 'GET', url: '/admin/v1/health', headers: owner.read })).json();
    expect(health).toMatchObject({ node: process.version, store: { engine, available: true, error: null, log: { enabled: true, dropped: 0 } }, memory: { rss_bytes: expect.any(Number) } });
    expect(health.sources.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(['keys.env', 'keys.store', 'rules', ...sources.map((s) => s.name)]));
    // The public probe still says nothing of this.
    expect((await t.app.inject('/readyz')).json()).toEqual({ status: 'ready', unavailable: [] });
  });
});
