import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, type Session } from '../support/admin.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * Users and memberships through the admin API, on both engines: owners manage users, an account's
 * admins manage its members and see nothing of their other accounts, one-time passwords are shown
 * once and must be changed, a disabled user is refused at once, the instance keeps an owner.
 */
describe.each(ENGINES)('users and members on %s', (engine: EngineName) => {
  let t: TestApp;
  let owner: Session;
  let adminA: Session;
  let analystA: Session;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    for (const id of ['alpha', 'beta']) await t.app.store.accounts.create(id, id, { files: [], comment: '' }, 'test');
    await createUser(t.app.store, 'admin.a@example.com', { roles: { alpha: 'admin' } });
    await createUser(t.app.store, 'analyst.a@example.com', { roles: { alpha: 'analyst' } });
    await createUser(t.app.store, 'both@example.com', { roles: { alpha: 'analyst', beta: 'admin' } });
    owner = await login(t.app, 'owner@example.com');
    adminA = await login(t.app, 'admin.a@example.com');
    analystA = await login(t.app, 'analyst.a@example.com');
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('makes a user with a one-time password that works once and only to choose a new one', async () => {
    const made = await t.app.inject({ method: 'POST', url: '/admin/v1/users', headers: owner.write, payload: { email: 'New.Analyst@Example.com', account: 'alpha', role: 'analyst' } });
    expect(made.statusCode).toBe(201);
    const { user, one_time_password } = made.json();
    expect(user).toMatchObject({ email: 'new.analyst@example.com', owner: false, password_change_required: true, memberships: [{ account_id: 'alpha', role: 'analyst' }] });
    expect(one_time_password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(made.body).not.toContain('scrypt');
    const session = await login(t.app, 'new.analyst@example.com', one_time_password);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: session.read }), 403, 'password_change_required');
    expect((await t.app.inject({ method: 'PUT', url: '/admin/v1/session/password', headers: session.write, payload: { current_password: one_time_password, new_password: 'my own password now' } })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: session.read })).statusCode).toBe(200);
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'new.analyst@example.com', password: one_time_password } }), 401, 'unauthenticated');
  });

  it('lets an account admin add members, new or existing, and shows them only that account\'s roles', async () => {
    const fresh = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/members', headers: adminA.write, payload: { email: 'invitee@example.com', role: 'analyst' } });
    expect(fresh.json()).toMatchObject({ user: { email: 'invitee@example.com', memberships: [{ account_id: 'alpha', role: 'analyst' }] }, one_time_password: expect.any(String) });
    const members = (await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/members', headers: adminA.read })).json().users as Array<{ email: string; memberships: unknown[] }>;
    const both = members.find((m) => m.email === 'both@example.com')!;
    // Their role in beta is none of alpha's business.
    expect(both.memberships).toEqual([{ account_id: 'alpha', role: 'analyst' }]);
    expect(JSON.stringify(members)).not.toContain('beta');
    const existing = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/members', headers: adminA.write, payload: { email: 'owner@example.com', role: 'analyst' } });
    expect(existing.json()).toMatchObject({ one_time_password: null, user: { memberships: [{ account_id: 'alpha', role: 'analyst' }] } });
  });

  it('regression: an account admin adding an existing user learned from `owner` whether they are an instance owner', async () => {
    const added = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/alpha/members', headers: adminA.write, payload: { email: 'owner@example.com', role: 'analyst' } });
    expect(added.statusCode).toBe(201);
    expect(added.json().user).not.toHaveProperty('owner');
    const members = (await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/members', headers: adminA.read })).json().users as object[];
    for (const m of members) expect(m).not.toHaveProperty('owner');
    const user = members.find((m) => (m as { email: string }).email === 'owner@example.com') as { id: string };
    const changed = await t.app.inject({ method: 'PUT', url: `/admin/v1/accounts/alpha/members/${user.id}`, headers: adminA.write, payload: { role: 'analyst' } });
    expect(changed.json()).not.toHaveProperty('owner');
    // Owners still see it, on their own list.
    const all = (await t.app.inject({ method: 'GET', url: '/admin/v1/users', headers: owner.read })).json().users as Array<{ email: string; owner: boolean }>;
    expect(all.find((u) => u.email === 'owner@example.com')!.owner).toBe(true);
  });

  it('refuses an account admin anything about users outside their account, and an analyst the member list', async () => {
    const outsider = await createUser(t.app.store, 'outsider@example.com', { roles: { beta: 'analyst' } });
    expectAdminProblem(await t.app.inject({ method: 'PUT', url: `/admin/v1/accounts/alpha/members/${outsider.id}`, headers: adminA.write, payload: { role: 'admin' } }), 404, 'resource_not_found');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/alpha/members/${outsider.id}`, headers: adminA.write }), 404, 'resource_not_found');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/beta/members', headers: adminA.read }), 404, 'resource_not_found');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/users', headers: adminA.read }), 403, 'forbidden');
    expectAdminProblem(await t.app.inject({ method: 'PATCH', url: `/admin/v1/users/${outsider.id}`, headers: adminA.write, payload: { status: 'disabled' } }), 403, 'forbidden');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha/members', headers: analystA.read }), 403, 'forbidden');
    expect((await t.app.store.users.get(outsider.id))!.memberships).toEqual([{ account_id: 'beta', role: 'analyst' }]);
  });

  it('changes and removes a member\'s role in one account only, audited', async () => {
    const both = (await t.app.store.users.byEmail('both@example.com'))!;
    const promoted = await t.app.inject({ method: 'PUT', url: `/admin/v1/accounts/alpha/members/${both.id}`, headers: adminA.write, payload: { role: 'admin' } });
    expect(promoted.json().memberships).toEqual([{ account_id: 'alpha', role: 'admin' }]);
    expect((await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/alpha/members/${both.id}`, headers: adminA.write })).statusCode).toBe(204);
    expect((await t.app.store.users.get(both.id))!.memberships).toEqual([{ account_id: 'beta', role: 'admin' }]);
    const audit = (await t.app.store.audit({ account: 'alpha' })).slice(0, 2);
    expect(audit.map((a) => [a.action, a.target, a.before, a.after])).toEqual([['membership.remove', both.id, { role: 'admin' }, null], ['membership.update', both.id, { role: 'analyst' }, { role: 'admin' }]]);
  });

  it('refuses a disabled user at once, ends sessions on a password reset, and keeps one active owner', async () => {
    const user = await createUser(t.app.store, 'leaver@example.com', { roles: { alpha: 'analyst' } });
    const session = await login(t.app, 'leaver@example.com');
    expect((await t.app.inject({ method: 'PATCH', url: `/admin/v1/users/${user.id}`, headers: owner.write, payload: { status: 'disabled' } })).json().status).toBe('disabled');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/alpha', headers: session.read }), 401, 'unauthenticated');

    const reset = await createUser(t.app.store, 'forgetful@example.com', { roles: { alpha: 'analyst' } });
    const before = await login(t.app, 'forgetful@example.com');
    const answer = await t.app.inject({ method: 'POST', url: `/admin/v1/users/${reset.id}/password-reset`, headers: owner.write });
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: before.read }), 401, 'unauthenticated');
    expect((await login(t.app, 'forgetful@example.com', answer.json().one_time_password)).csrf).toBeTruthy();

    const me = (await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: owner.read })).json().user.id;
    const demoted = await t.app.inject({ method: 'PATCH', url: `/admin/v1/users/${me}`, headers: owner.write, payload: { owner: false } });
    expect(expectAdminProblem(demoted, 409, 'conflict').detail).toMatch(/at least one active owner/);
  });
});
