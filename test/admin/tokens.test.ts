import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { PAIR_RULE } from '../../src/admin/routes/session.js';
import { bearerToken, createUser, expectAdminProblem, login, PASSWORD, problemShape, type Session } from '../support/admin.js';
import { expectProblem } from '../support/contract.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * Admin tokens through HTTP, on both engines: shown once, scoped to one account and a role (or
 * instance-wide for owners), no CSRF token needed, expiring, revocable; and on PostgreSQL, two
 * replicas: a token revoked, a user disabled or an account disabled through one is refused by the
 * other (tokens and users on its very next request; keys from its next poll), and failed logins
 * on one count on the other.
 */
const DAY = 86_400_000;

describe.each(ENGINES)('admin tokens on %s', (engine: EngineName) => {
  let t: TestApp;
  let clock = Date.parse('2026-11-21T12:00:00Z');
  let owner: Session;
  let adminA: Session;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) }, {}, { now: () => clock });
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    for (const id of ['alpha', 'beta']) await t.app.store.accounts.create(id, id, { files: [], comment: '' }, 'test');
    await createUser(t.app.store, 'admin.a@example.com', { roles: { alpha: 'admin' } });
    owner = await login(t.app, 'owner@example.com');
    adminA = await login(t.app, 'admin.a@example.com');
  });
  afterAll(async () => {
    await t.app.close();
  });

  const make = async (session: Session, url: string, payload: object) => {
    const response = await t.app.inject({ method: 'POST', url, headers: session.write, payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { token: string; info: { id: string; prefix: string; account_id: string | null; role: string } };
  };

  it('shows a token once; it acts in its account with its role, writes without a CSRF token, and nowhere else', async () => {
    const admin = await make(adminA, '/admin/v1/accounts/alpha/tokens', { name: 'ci', role: 'admin' });
    expect(admin.token).toMatch(/^rat_[A-Za-z0-9_-]{43}$/);
    expect(admin.info).toMatchObject({ account_id: 'alpha', role: 'admin', prefix: admin.token.slice(0, 10) });
    const listed = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/tokens', headers: adminA.read });
    expect(listed.json().tokens.map((x: { id: string }) => x.id)).toContain(admin.info.id);
    expect(listed.body).not.toContain(admin.token);

    const as = bearerToken(admin.token);
    const key = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: as });
    expect(key.statusCode).toBe(201);
    expect((await t.app.store.audit({ account: 'alpha' }))[0]).toMatchObject({ action: 'key.create', actor: `token:${admin.info.id}` });
    const session = (await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: as })).json();
    expect(session).toMatchObject({ kind: 'token', token: { id: admin.info.id, name: 'ci' }, user: null, csrf_token: null, accounts: [{ id: 'alpha', role: 'admin' }] });
    // Another account is as absent as one that does not exist; owners' routes are refused.
    const beta = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/beta/keys', headers: as });
    expect(JSON.stringify(problemShape(beta)).replace('beta', 'nope')).toBe(JSON.stringify(problemShape(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/nope/keys', headers: as }))));
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: as, payload: { id: 'gamma' } }), 403, 'forbidden');
    // A token has no password to change, no session to end.
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: '/admin/v1/session', headers: as }), 403, 'forbidden');
    // Nor is it an API key.
    expectProblem(await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(admin.token), payload: evaluationBody() }), 401, 'unauthorized');
  });

  it('gives an analyst token the analyst\'s reads and none of the admin\'s writes', async () => {
    const analyst = await make(adminA, '/admin/v1/accounts/alpha/tokens', { name: 'dashboard', role: 'analyst' });
    const as = bearerToken(analyst.token);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/keys', headers: as })).statusCode).toBe(200);
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: as }), 403, 'forbidden');
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/tokens', headers: as, payload: { name: 'escalate', role: 'admin' } }), 403, 'forbidden');
  });

  it('never lets a token make a token or a user, so a leaked one cannot outlive its revocation', async () => {
    const admin = bearerToken((await make(adminA, '/admin/v1/accounts/alpha/tokens', { name: 'leaked', role: 'admin' })).token);
    const ownerToken = bearerToken((await make(owner, '/admin/v1/tokens', { name: 'leaked ops', role: 'owner' })).token);
    const refused = [
      [admin, '/admin/v1/accounts/alpha/tokens', { name: 'backdoor', role: 'admin' }],
      [admin, '/admin/v1/accounts/alpha/members', { email: 'backdoor@example.com', role: 'admin' }],
      [ownerToken, '/admin/v1/tokens', { name: 'backdoor', role: 'owner' }],
      [ownerToken, '/admin/v1/users', { email: 'backdoor@example.com', owner: true }],
    ] as const;
    for (const [headers, url, payload] of refused) {
      const response = await t.app.inject({ method: 'POST', url, headers, payload });
      expect(expectAdminProblem(response, 403, 'forbidden').detail).toContain('console session');
    }
    expect((await t.app.store.users.list()).map((u) => u.email)).not.toContain('backdoor@example.com');
    // What its role allows otherwise still works: a pipeline rotating keys.
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/keys', headers: admin })).statusCode).toBe(200);
  });

  it('lets only owners make instance-wide tokens, which act on every account', async () => {
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: adminA.write, payload: { name: 'x', role: 'owner' } }), 403, 'forbidden');
    const missing = await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: owner.write, payload: { name: 'x', role: 'admin' } });
    expect(expectAdminProblem(missing, 400, 'invalid_request').errors).toEqual([{ path: 'account', message: 'required for an admin or analyst token' }]);
    const wide = await make(owner, '/admin/v1/tokens', { name: 'ops', role: 'owner' });
    expect(wide.info).toMatchObject({ account_id: null, role: 'owner' });
    const as = bearerToken(wide.token);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/beta/keys', headers: as })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/tokens', headers: as })).json().tokens.length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a token once it expires, and once it is revoked', async () => {
    const short = await make(adminA, '/admin/v1/accounts/alpha/tokens', { name: 'one day', role: 'analyst', expires_in_days: 1 });
    const as = bearerToken(short.token);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: as })).statusCode).toBe(200);
    clock += DAY;
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: as }), 401, 'unauthenticated');
    // A day later the sessions have expired too.
    owner = await login(t.app, 'owner@example.com');
    adminA = await login(t.app, 'admin.a@example.com');

    const revocable = await make(adminA, '/admin/v1/accounts/alpha/tokens', { name: 'to revoke', role: 'admin' });
    const other = await make(owner, '/admin/v1/tokens', { name: 'beta bot', role: 'admin', account: 'beta' });
    // An account's admin cannot revoke another account's token, nor learn it exists.
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/alpha/tokens/${other.info.id}`, headers: adminA.write }), 404, 'resource_not_found');
    const revoked = await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/alpha/tokens/${revocable.info.id}`, headers: adminA.write });
    expect(revoked.json()).toMatchObject({ id: revocable.info.id, name: 'to revoke' });
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: bearerToken(revocable.token) }), 401, 'unauthenticated');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/beta', headers: bearerToken(other.token) })).statusCode).toBe(200);
  });
});

describe('two replicas on one PostgreSQL', () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    const url = await freshDatabaseUrl('postgres');
    // A long poll interval: what is refused below is refused without waiting for a poll.
    [one, two] = [await startTestApp({ DATABASE_URL: url, RELOAD_INTERVAL_MS: '600000' }), await startTestApp({ DATABASE_URL: url, RELOAD_INTERVAL_MS: '600000' })];
    await createUser(one.app.store, 'owner@example.com', { owner: true });
    await one.app.store.accounts.create('alpha', 'alpha', { files: [], comment: '' }, 'test');
    await one.app.store.ruleSets.apply('alpha', [{ eventType: 'account_register', yaml: 'rules: []\n' }], { actor: 'test', comment: null });
    await createUser(one.app.store, 'analyst@example.com', { roles: { alpha: 'analyst' } });
  });
  afterAll(async () => {
    await Promise.all([one.app.close(), two.app.close()]);
  });

  it('refuse a revoked admin token and a disabled user in the other replica on its next request', async () => {
    const owner = await login(one.app, 'owner@example.com');
    const made = (await one.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: owner.write, payload: { name: 'pipeline', role: 'admin', account: 'alpha' } })).json();
    const analyst = await login(two.app, 'analyst@example.com');
    expect((await two.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: bearerToken(made.token) })).statusCode).toBe(200);
    expect((await two.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: analyst.read })).statusCode).toBe(200);

    await one.app.inject({ method: 'DELETE', url: `/admin/v1/tokens/${made.info.id}`, headers: owner.write });
    const analystId = (await one.app.store.users.byEmail('analyst@example.com'))!.id;
    await one.app.inject({ method: 'PATCH', url: `/admin/v1/users/${analystId}`, headers: owner.write, payload: { status: 'disabled' } });
    expectAdminProblem(await two.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: bearerToken(made.token) }), 401, 'unauthenticated');
    expectAdminProblem(await two.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: analyst.read }), 401, 'unauthenticated');
  });

  it('count failed logins together: what failed on one replica throttles the other', async () => {
    await createUser(one.app.store, 'target@example.com', { roles: { alpha: 'analyst' } });
    for (let i = 0; i < PAIR_RULE.maxFailures; i++) {
      const app = i % 2 === 0 ? one.app : two.app;
      expectAdminProblem(await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'target@example.com', password: `guess ${i}` } }), 401, 'unauthenticated');
    }
    for (const app of [one.app, two.app]) {
      expectAdminProblem(await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'target@example.com', password: PASSWORD } }), 429, 'too_many_attempts');
    }
  });

  it('stop a disabled account\'s keys in the other replica at its next poll of the change counter', async () => {
    const owner = await login(one.app, 'owner@example.com');
    const { key } = (await one.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: owner.write })).json();
    await two.app.reloadConfiguration();
    const evaluate = () => two.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload: evaluationBody() });
    expect((await evaluate()).statusCode).toBe(200);
    await one.app.inject({ method: 'PUT', url: '/admin/v1/accounts/alpha/status', headers: owner.write, payload: { status: 'disabled' } });
    // What the replica's timer does every RELOAD_INTERVAL_MS.
    await two.app.reloadConfiguration();
    expectProblem(await evaluate(), 401, 'unauthorized');
  });
});
