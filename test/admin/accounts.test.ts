import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, problemShape, type Session } from '../support/admin.js';
import { expectProblem } from '../support/contract.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * Accounts through HTTP with the real app, on both engines, as an attacker would try them: a
 * member of one account cannot read, change or learn of another; an analyst cannot change what
 * needs an admin; only owners create and disable; every change is in the audit log.
 */
describe.each(ENGINES)('accounts on %s', (engine: EngineName) => {
  let t: TestApp;
  let owner: Session;
  let adminA: Session;
  let analystA: Session;
  let adminB: Session;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    owner = await login(t.app, 'owner@example.com');
    for (const id of ['alpha', 'beta']) {
      expect((await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: owner.write, payload: { id, name: `${id} Ltd` } })).statusCode).toBe(201);
    }
    await createUser(t.app.store, 'admin.a@example.com', { roles: { alpha: 'admin' } });
    await createUser(t.app.store, 'analyst.a@example.com', { roles: { alpha: 'analyst' } });
    await createUser(t.app.store, 'admin.b@example.com', { roles: { beta: 'admin' } });
    adminA = await login(t.app, 'admin.a@example.com');
    analystA = await login(t.app, 'analyst.a@example.com');
    adminB = await login(t.app, 'admin.b@example.com');
  });
  afterAll(async () => {
    await t.app.close();
  });

  const get = (session: Session, url: string) => t.app.inject({ method: 'GET', url, headers: session.read });
  const send = (session: Session, method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) => t.app.inject({ method, url, headers: session.write, payload });

  it('lists to each caller only the accounts they belong to (every one for an owner), with their role', async () => {
    const ids = async (s: Session) => (await get(s, '/admin/v1/accounts')).json().accounts.map((a: { id: string; role: string }) => `${a.id}:${a.role}`);
    expect(await ids(owner)).toEqual(['alpha:admin', 'beta:admin', 'default:admin']);
    expect(await ids(adminA)).toEqual(['alpha:admin']);
    expect(await ids(analystA)).toEqual(['alpha:analyst']);
    expect(await ids(adminB)).toEqual(['beta:admin']);
    const session = (await get(analystA, '/admin/v1/session')).json();
    expect(session.accounts).toEqual([{ id: 'alpha', name: 'alpha Ltd', status: 'active', role: 'analyst' }]);
  });

  it('answers a member of another account exactly as it answers for an account that does not exist', async () => {
    for (const [method, suffix, payload] of [['GET', '', undefined], ['PATCH', '', { name: 'pwned' }]] as const) {
      const other = method === 'GET' ? await get(adminA, `/admin/v1/accounts/beta${suffix}`) : await send(adminA, method, `/admin/v1/accounts/beta${suffix}`, payload);
      const missing = method === 'GET' ? await get(adminA, `/admin/v1/accounts/gamma${suffix}`) : await send(adminA, method, `/admin/v1/accounts/gamma${suffix}`, payload);
      expectAdminProblem(other, 404, 'resource_not_found');
      expect(JSON.stringify(problemShape(other)).replace('beta', 'gamma')).toBe(JSON.stringify(problemShape(missing)));
    }
    // Not even a validation error leaks through: the caller is refused before the body is read.
    expectAdminProblem(await send(adminA, 'PATCH', '/admin/v1/accounts/beta', { name: 42 }), 404, 'resource_not_found');
    expect((await get(owner, '/admin/v1/accounts/beta')).json().name).toBe('beta Ltd');
  });

  it('lets an analyst read the account but not rename it; an admin renames it, audited with who, before and after', async () => {
    expect((await get(analystA, '/admin/v1/accounts/alpha')).json()).toMatchObject({ id: 'alpha', role: 'analyst' });
    expectAdminProblem(await send(analystA, 'PATCH', '/admin/v1/accounts/alpha', { name: 'by analyst' }), 403, 'forbidden');
    const renamed = await send(adminA, 'PATCH', '/admin/v1/accounts/alpha', { name: 'Alpha GmbH' });
    expect(renamed.json()).toMatchObject({ id: 'alpha', name: 'Alpha GmbH', role: 'admin' });
    const me = (await get(adminA, '/admin/v1/session')).json().user.id;
    const [entry] = await t.app.store.audit({ account: 'alpha' });
    expect(entry).toMatchObject({ actor: `user:${me}`, action: 'account.rename', target: 'alpha', before: { name: 'alpha Ltd' }, after: { name: 'Alpha GmbH' } });
  });

  it('lets only owners create and disable accounts', async () => {
    expectAdminProblem(await send(adminA, 'POST', '/admin/v1/accounts', { id: 'mine' }), 403, 'forbidden');
    expectAdminProblem(await send(adminA, 'PUT', '/admin/v1/accounts/alpha/status', { status: 'disabled' }), 403, 'forbidden');
    // The same refusal for an account that does not exist: the route itself is the owners'.
    expect(problemShape(await send(adminB, 'PUT', '/admin/v1/accounts/alpha/status', { status: 'disabled' }))).toEqual(problemShape(await send(adminB, 'PUT', '/admin/v1/accounts/zeta/status', { status: 'disabled' })));
  });

  it('validates what it is sent, naming the field, and refuses a duplicate id', async () => {
    const bad = await send(owner, 'POST', '/admin/v1/accounts', { id: 'no spaces allowed', name: '' });
    expect(expectAdminProblem(bad, 400, 'invalid_request').errors!.map((e) => e.path).sort()).toEqual(['id', 'name']);
    const duplicate = await send(owner, 'POST', '/admin/v1/accounts', { id: 'alpha' });
    expect(expectAdminProblem(duplicate, 409, 'conflict').detail).toBe('account "alpha" already exists');
    expectProblem(await t.app.inject({ method: 'DELETE', url: '/admin/v1/accounts', headers: owner.write }), 405, 'method_not_allowed', { allow: 'GET, POST, HEAD' });
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts' }), 401, 'unauthenticated');
  });

  it('stops a disabled account\'s keys at once, and brings them back when it is enabled again', async () => {
    const created = await t.app.store.accounts.createKey('beta', { actor: 'test', seed: { files: [], comment: '' } });
    await t.app.reloadConfiguration();
    const evaluate = () => t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(created.key), payload: evaluationBody() });
    expect((await evaluate()).statusCode).toBe(200);
    const disabled = await send(owner, 'PUT', '/admin/v1/accounts/beta/status', { status: 'disabled' });
    expect(disabled.json()).toMatchObject({ id: 'beta', status: 'disabled' });
    expectProblem(await evaluate(), 401, 'unauthorized');
    expect((await get(adminB, '/admin/v1/accounts/beta')).json().status).toBe('disabled');
    await send(owner, 'PUT', '/admin/v1/accounts/beta/status', { status: 'active' });
    expect((await evaluate()).statusCode).toBe(200);
    expect((await t.app.store.audit({ account: 'beta' })).slice(0, 2).map((a) => a.action)).toEqual(['account.enable', 'account.disable']);
  });
});
