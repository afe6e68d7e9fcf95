import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as adminCli } from '../../src/cli/admin.js';
import { ADDRESS_RULE } from '../../src/admin/routes/session.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { expectAdminProblem, login, sessionFrom } from '../support/admin.js';

/**
 * The first owner: the one-time setup link of a development start (never in the log, once, only
 * while no user exists, not in production) and `npm run admin -- create` (a one-time password that
 * must be changed).
 */
let apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.app.close()));
  apps = [];
});

async function start(env: Record<string, string>) {
  const tokens: string[] = [];
  const t = await startTestApp({ LOG_LEVEL: 'trace', ...env }, {}, { onSetupToken: (token) => tokens.push(token) });
  apps.push(t);
  return { t, tokens };
}

const storeUrl = () => `sqlite:${join(mkdtempSync(join(tmpdir(), 'risk-store-')), 'risk.sqlite')}`;

describe('the first owner', () => {
  it('is made once with the setup token a development start hands over, which never reaches the log', async () => {
    const url = storeUrl();
    const { t, tokens } = await start({ DATABASE_URL: url, NODE_ENV: 'development' });
    expect(tokens).toHaveLength(1);
    const token = tokens[0]!;
    expect(t.logs.lines.some((l) => String(l.msg).includes('setup link'))).toBe(true);
    const setup = (payload: object) => t.app.inject({ method: 'POST', url: '/admin/v1/setup', payload });
    const weak = await setup({ token, email: 'first@example.com', password: 'short' });
    expect(expectAdminProblem(weak, 400, 'invalid_request').errors).toEqual([{ path: 'password', message: 'must be at least 12 characters' }]);
    expectAdminProblem(await setup({ token: 'x'.repeat(43), email: 'first@example.com', password: 'a good long password' }), 404, 'resource_not_found');
    const made = await setup({ token, email: 'First@Example.com', password: 'a good long password' });
    expect(made.statusCode).toBe(201);
    const session = sessionFrom(made);
    expect(made.json()).toMatchObject({ user: { email: 'first@example.com', owner: true, password_change_required: false } });
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: session.write, payload: { id: 'acme' } })).statusCode).toBe(201);
    // Used: never again, not even for a second owner.
    expectAdminProblem(await setup({ token, email: 'second@example.com', password: 'a good long password' }), 404, 'resource_not_found');
    expect(t.logs.raw.join('\n')).not.toContain(token);

    // A later start finds a user and prints nothing.
    await t.app.close();
    apps = [];
    expect((await start({ DATABASE_URL: url, NODE_ENV: 'development' })).tokens).toEqual([]);
  });

  it('is not offered in production, and a restart replaces the token', async () => {
    expect((await start({ DATABASE_URL: storeUrl(), NODE_ENV: 'production' })).tokens).toEqual([]);
    const url = storeUrl();
    const first = await start({ DATABASE_URL: url, NODE_ENV: 'development' });
    await first.t.app.close();
    apps = [];
    const second = await start({ DATABASE_URL: url, NODE_ENV: 'development' });
    expect(second.tokens[0]).not.toBe(first.tokens[0]);
    expectAdminProblem(await second.t.app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token: first.tokens[0], email: 'a@example.com', password: 'a good long password' } }), 404, 'resource_not_found');
  });

  it('is made by npm run admin -- create, with a one-time password printed once that must be changed', async () => {
    const url = storeUrl();
    const out: string[] = [];
    const err: string[] = [];
    expect(await adminCli(['create', '--email', 'ops@example.com', '--owner'], (l) => out.push(l), (l) => err.push(l), { DATABASE_URL: url })).toBe(0);
    expect(out).toHaveLength(1);
    const password = out[0]!;
    expect(password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(err.join('\n')).not.toContain(password);
    const { t } = await start({ DATABASE_URL: url });
    const session = await login(t.app, 'ops@example.com', password);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: session.read }), 403, 'password_change_required');
    await t.app.inject({ method: 'PUT', url: '/admin/v1/session/password', headers: session.write, payload: { current_password: password, new_password: 'the owner chose this' } });
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: session.read })).statusCode).toBe(200);
    expect(t.logs.raw.join('\n')).not.toContain(password);

    const listed: string[] = [];
    await adminCli(['list'], (l) => listed.push(l), () => undefined, { DATABASE_URL: url });
    expect(listed).toEqual([expect.stringMatching(/^usr_[0-9a-f]{16} {2}ops@example\.com {2}owner {2}active {2}-$/)]);
    await expect(adminCli(['create', '--email', 'x@example.com', '--role', 'admin'], () => undefined, () => undefined, { DATABASE_URL: url })).rejects.toThrow('--account and --role go together');
  });

  it('throttles an address that guesses setup tokens (in production there is none to find)', async () => {
    const { t } = await start({ DATABASE_URL: storeUrl(), NODE_ENV: 'production' });
    const guess = () => t.app.inject({ method: 'POST', url: '/admin/v1/setup', remoteAddress: '2a01::1234:5678:9abc:def0:1', payload: { token: 'x'.repeat(43), email: 'a@example.com', password: 'a good long password' } });
    for (let i = 0; i < ADDRESS_RULE.maxFailures; i++) expectAdminProblem(await guess(), 404, 'resource_not_found');
    const throttled = await guess();
    expectAdminProblem(throttled, 429, 'too_many_attempts');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  });
});
