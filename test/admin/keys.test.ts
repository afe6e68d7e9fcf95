import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, problemShape, type Session } from '../support/admin.js';
import { expectProblem } from '../support/contract.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * An account's API keys through the admin API, on both engines: shown once, listed without the
 * key, at most two, rotated while the other serves, revoked; analysts read the list but change
 * nothing; other accounts' members learn nothing.
 */
describe.each(ENGINES)('API keys through the admin API on %s', (engine: EngineName) => {
  let t: TestApp;
  let admin: Session;
  let analyst: Session;
  let stranger: Session;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    const owner = await createUser(t.app.store, 'owner@example.com', { owner: true });
    for (const id of ['alpha', 'beta']) await t.app.store.accounts.create(id, id, { files: [], comment: '' }, `user:${owner.id}`);
    await t.app.store.ruleSets.apply('alpha', [{ eventType: 'account_register', yaml: 'rules:\n  - library: ip_tor\n' }], { actor: 'test', comment: null });
    await createUser(t.app.store, 'admin@example.com', { roles: { alpha: 'admin' } });
    await createUser(t.app.store, 'analyst@example.com', { roles: { alpha: 'analyst' } });
    await createUser(t.app.store, 'stranger@example.com', { roles: { beta: 'admin' } });
    admin = await login(t.app, 'admin@example.com');
    analyst = await login(t.app, 'analyst@example.com');
    stranger = await login(t.app, 'stranger@example.com');
  });
  afterAll(async () => {
    await t.app.close();
  });

  const evaluate = (key: string) => t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload: evaluationBody() });

  it('shows a new key once, lists it by id and prefix only, holds two, rotates one while the other serves, and revokes', async () => {
    const first = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: admin.write });
    expect(first.statusCode).toBe(201);
    const a = first.json() as { key: string; info: { id: string; prefix: string } };
    expect(a.key).toMatch(/^rk_[A-Za-z0-9_-]{43}$/);
    expect(a.info.prefix).toBe(a.key.slice(0, 9));
    const b = (await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: admin.write })).json() as typeof a;
    const third = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: admin.write });
    expect(expectAdminProblem(third, 409, 'conflict').detail).toBe('account "alpha" already has 2 keys; rotate or revoke one first');

    const list = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/keys', headers: analyst.read });
    expect(list.json()).toEqual({ keys: [expect.objectContaining({ id: a.info.id, prefix: a.info.prefix, last_used_at: null }), expect.objectContaining({ id: b.info.id })], env_keys: 0, development_key: null, max_keys: 2 });
    for (const key of [a.key, b.key]) expect(list.body).not.toContain(key);

    expect((await evaluate(a.key)).statusCode).toBe(200);
    expect((await evaluate(b.key)).statusCode).toBe(200);
    const rotated = await t.app.inject({ method: 'POST', url: `/admin/v1/accounts/alpha/keys/${a.info.id}/rotate`, headers: admin.write });
    expect(rotated.statusCode).toBe(201);
    const c = rotated.json() as typeof a & { replaced: { id: string } };
    expect(c.replaced.id).toBe(a.info.id);
    expectProblem(await evaluate(a.key), 401, 'unauthorized');
    expect((await evaluate(b.key)).statusCode).toBe(200);
    expect((await evaluate(c.key)).statusCode).toBe(200);

    const revoked = await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/alpha/keys/${b.info.id}`, headers: admin.write });
    expect(revoked.json()).toMatchObject({ id: b.info.id, revoked_at: expect.any(String) });
    expectProblem(await evaluate(b.key), 401, 'unauthorized');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/alpha/keys/${b.info.id}`, headers: admin.write }), 404, 'resource_not_found');

    // Audited with who did it, and no key anywhere in the log.
    const audit = await t.app.store.audit({ account: 'alpha' });
    expect(audit.filter((e) => e.action.startsWith('key.')).map((e) => e.action)).toEqual(['key.revoke', 'key.create', 'key.rotate.revoke', 'key.create', 'key.create']);
    expect(audit.every((e) => !e.action.startsWith('key.') || e.actor.startsWith('user:usr_'))).toBe(true);
    for (const key of [a.key, b.key, c.key]) expect(JSON.stringify(audit)).not.toContain(key);
  });

  it('lets an analyst read the key list but never make, rotate or revoke a key', async () => {
    const live = (await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/keys', headers: analyst.read })).json().keys as Array<{ id: string }>;
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/keys', headers: analyst.write }), 403, 'forbidden');
    expectAdminProblem(await t.app.inject({ method: 'POST', url: `/admin/v1/accounts/alpha/keys/${live[0]!.id}/rotate`, headers: analyst.write }), 403, 'forbidden');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/alpha/keys/${live[0]!.id}`, headers: analyst.write }), 403, 'forbidden');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/keys', headers: analyst.read })).json().keys).toEqual(live);
  });

  it('tells a member of another account nothing: every key route answers as for a missing account', async () => {
    const live = (await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/keys', headers: admin.read })).json().keys as Array<{ id: string }>;
    const routes = [['GET', 'keys'], ['POST', 'keys'], ['POST', `keys/${live[0]!.id}/rotate`], ['DELETE', `keys/${live[0]!.id}`]] as const;
    for (const [method, path] of routes) {
      const theirs = await t.app.inject({ method, url: `/admin/v1/accounts/alpha/${path}`, headers: stranger.write });
      const none = await t.app.inject({ method, url: `/admin/v1/accounts/omega/${path}`, headers: stranger.write });
      expectAdminProblem(theirs, 404, 'resource_not_found');
      expect(JSON.stringify(problemShape(theirs)).replace('alpha', 'omega')).toBe(JSON.stringify(problemShape(none)));
    }
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/keys', headers: admin.read })).json().keys).toEqual(live);
  });
});
