import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { bearerToken, login, PASSWORD } from '../support/admin.js';

/**
 * The admin API's secrets never reach the log, at `trace`, wherever a client puts them: passwords
 * (right, wrong, one-time, new), the session cookie and its CSRF token, admin tokens (valid,
 * revoked, in the header, the query or the path), the setup token, and keys made through the API;
 * nor the e-mail addresses people log in with.
 */
let t: TestApp;
const setupTokens: string[] = [];
beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'trace', NODE_ENV: 'development' }, {}, { onSetupToken: (token) => setupTokens.push(token) });
});
afterAll(async () => {
  await t.app.close();
});

it('never logs a password, a session, a CSRF token, an admin token, a new key or a login address', async () => {
  const secrets: string[] = [PASSWORD, ...setupTokens];
  const owner = 'owner.canary@example.com';
  const setup = await t.app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token: setupTokens[0], email: owner, password: PASSWORD } });
  expect(setup.statusCode).toBe(201);
  await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: owner, password: 'wrong password canary' } });
  secrets.push('wrong password canary');
  const session = await login(t.app, owner);
  secrets.push(session.cookie.split('=')[1]!, session.csrf);

  await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: session.write, payload: { id: 'acme' } });
  const key = (await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/keys', headers: session.write })).json().key as string;
  const made = (await t.app.inject({ method: 'POST', url: '/admin/v1/users', headers: session.write, payload: { email: 'new.canary@example.com', account: 'acme', role: 'admin' } })).json();
  const token = (await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: session.write, payload: { name: 'ci', role: 'owner' } })).json();
  secrets.push(key, made.one_time_password, token.token);

  const newcomer = await login(t.app, 'new.canary@example.com', made.one_time_password);
  await t.app.inject({ method: 'PUT', url: '/admin/v1/session/password', headers: newcomer.write, payload: { current_password: made.one_time_password, new_password: 'new password canary' } });
  secrets.push('new password canary', newcomer.cookie.split('=')[1]!, newcomer.csrf);

  // A token where it does not belong, and after it is revoked.
  await t.app.inject({ method: 'GET', url: `/admin/v1/accounts?token=${token.token}`, headers: bearerToken(token.token) });
  await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/${token.token}`, headers: bearerToken(token.token) });
  await t.app.inject({ method: 'DELETE', url: `/admin/v1/tokens/${token.info.id}`, headers: bearerToken(token.token) });
  await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: bearerToken(token.token) });
  await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: { cookie: `risk_session=${session.csrf}` } });
  await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: `{"email":"${owner}","password":"${PASSWORD}",}`, headers: { 'content-type': 'application/json' } });

  expect(t.logs.raw.length).toBeGreaterThan(10);
  const all = t.logs.raw.join('\n');
  for (const secret of [...secrets, owner, 'new.canary@example.com']) {
    expect(all).not.toContain(secret);
    expect(all).not.toContain(encodeURIComponent(secret));
  }
  // Each request still wrote its line (with the status), so the check above is not vacuous.
  expect(t.logs.lines.filter((l) => typeof l.url === 'string' && String(l.url).startsWith('/admin/v1')).length).toBeGreaterThanOrEqual(14);
});
