import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RULE, PAIR_RULE, USER_RULE } from '../../src/admin/routes/session.js';
import { hashSessionId } from '../../src/admin/session.js';
import { readRuleFiles } from '../../src/rules/templates.js';
import { bearer, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, PASSWORD, problemShape, sessionFrom } from '../support/admin.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * Console sessions through HTTP with the real app, on both store engines: the cookie's attributes,
 * CSRF on writes, logout, idle and absolute expiry (an injected clock), login throttling per user and
 * address, per user and per address, one-time passwords, and API keys refused on /admin.
 */
const MINUTE = 60_000;

describe.each(ENGINES)('console sessions on %s', (engine: EngineName) => {
  let t: TestApp;
  let clock = Date.parse('2026-11-21T12:00:00Z');
  let n = 0;
  /** A fresh user per test: throttling counts per e-mail address. */
  const fresh = async (options: Parameters<typeof createUser>[2] = {}) => {
    const email = `user${(n += 1)}@example.com`;
    return { email, user: await createUser(t.app.store, email, options) };
  };
  /** Requests from a given client address (throttling counts per address). */
  const from = (remoteAddress: string) => ({ remoteAddress });

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine), TRUST_PROXY: '10.0.0.1' }, {}, { now: () => clock });
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('logs in with a session cookie that scripts, other sites and other paths never get', async () => {
    const { email, user } = await fresh();
    const response = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: email.toUpperCase(), password: PASSWORD } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['set-cookie']).toMatch(/^risk_session=[A-Za-z0-9_-]{43}; Path=\/admin\/v1; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json();
    expect(body).toMatchObject({ kind: 'user', user: { id: user.id, email, owner: false }, token: null, csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(body.session).toEqual({ created_at: new Date(clock).toISOString(), expires_at: new Date(clock + 12 * 60 * MINUTE).toISOString(), idle_expires_at: new Date(clock + 30 * MINUTE).toISOString() });
    // Only the hash of the id is stored.
    const id = /^risk_session=([^;]+)/.exec(String(response.headers['set-cookie']))![1]!;
    const rows = await t.app.store.engine.db.selectFrom('sessions').select('id_hash').where('user_id', '=', user.id).execute();
    expect(rows).toEqual([{ id_hash: hashSessionId(id) }]);
    expect(JSON.stringify(rows)).not.toContain(id);
  });

  it('marks the cookie Secure behind TLS, believing X-Forwarded-Proto only from TRUST_PROXY', async () => {
    const { email } = await fresh();
    const viaProxy = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, headers: { 'x-forwarded-proto': 'https' }, ...from('10.0.0.1') });
    expect(viaProxy.headers['set-cookie']).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    const spoofed = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, headers: { 'x-forwarded-proto': 'https' }, ...from('192.0.2.7') });
    expect(spoofed.headers['set-cookie']).not.toMatch(/Secure/);
  });

  it('answers a wrong password, an unknown address and a disabled user alike', async () => {
    const { email } = await fresh();
    const { email: disabled, user } = await fresh();
    await t.app.store.users.update(user.id, { status: 'disabled' }, 'test');
    const attempts = await Promise.all([
      t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: 'not the password' }, ...from('192.0.2.20') }),
      t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'nobody@example.com', password: PASSWORD }, ...from('192.0.2.20') }),
      t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: disabled, password: PASSWORD }, ...from('192.0.2.20') }),
    ]);
    for (const attempt of attempts) {
      expectAdminProblem(attempt, 401, 'unauthenticated');
      expect(attempt.headers['set-cookie']).toBeUndefined();
    }
    expect(new Set(attempts.map((a) => JSON.stringify(problemShape(a))))).toHaveProperty('size', 1);
  });

  it('refuses a cookie-authenticated write without the session\'s CSRF token, and accepts it with', async () => {
    const { email } = await fresh({ owner: true });
    const session = await login(t.app, email);
    const other = await login(t.app, email);
    const write = (headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers, payload: { id: `csrf-${n}` } });
    expectAdminProblem(await write(session.read), 403, 'csrf_failed');
    expectAdminProblem(await write({ ...session.read, 'x-csrf-token': '' }), 403, 'csrf_failed');
    expectAdminProblem(await write({ ...session.read, 'x-csrf-token': other.csrf }), 403, 'csrf_failed');
    expectAdminProblem(await write({ ...session.read, 'x-csrf-token': session.csrf.slice(1) }), 403, 'csrf_failed');
    // A form post cannot carry JSON: other content types are refused before anything else happens.
    const form = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: { ...session.read, 'content-type': 'application/x-www-form-urlencoded' }, payload: `id=form-${n}` });
    expect(form.statusCode).toBeGreaterThanOrEqual(400);
    expect((await t.app.store.accounts.rows()).map((a) => a.id).filter((id) => id.startsWith('csrf-') || id.startsWith('form-'))).toEqual([]);
    expect((await write(session.write)).statusCode).toBe(201);
    // Reads need no token.
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: session.read })).statusCode).toBe(200);
  });

  it('logs out: the cookie is cleared and the session refused from then on', async () => {
    const { email } = await fresh();
    const session = await login(t.app, email);
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: '/admin/v1/session', headers: session.read }), 403, 'csrf_failed');
    const out = await t.app.inject({ method: 'DELETE', url: '/admin/v1/session', headers: session.write });
    expect(out.statusCode).toBe(204);
    expect(out.headers['set-cookie']).toMatch(/^risk_session=; Path=\/admin\/v1; Max-Age=0; HttpOnly; SameSite=Strict$/);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: session.read }), 401, 'unauthenticated');
  });

  it('ends a session unused for SESSION_IDLE_TIMEOUT_MS, and any session after SESSION_MAX_AGE_MS', async () => {
    const { email } = await fresh();
    const idle = await login(t.app, email);
    const busy = await login(t.app, email);
    const whoami = (s: typeof idle) => t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: s.read });
    // Used every 20 minutes, the busy session outlives the idle timeout; the idle one does not.
    for (let i = 0; i < 3; i++) {
      clock += 20 * MINUTE;
      expect((await whoami(busy)).statusCode).toBe(200);
    }
    const expired = await whoami(idle);
    expectAdminProblem(expired, 401, 'unauthenticated');
    expect(expired.json().detail).toBe('The session has expired; log in again');
    expect(expired.headers['set-cookie']).toMatch(/^risk_session=; .*Max-Age=0/);
    // However busy, a session ends 12 hours after login.
    for (let elapsed = 60; elapsed < 12 * 60 - 20; elapsed += 20) {
      clock += 20 * MINUTE;
      expect((await whoami(busy)).statusCode).toBe(200);
    }
    clock += 40 * MINUTE;
    expectAdminProblem(await whoami(busy), 401, 'unauthenticated');
  });

  it(`throttles logins per user and address: after ${PAIR_RULE.maxFailures} failures from one address even the right password waits there, not elsewhere`, async () => {
    const { email } = await fresh();
    for (let i = 0; i < PAIR_RULE.maxFailures; i++) {
      expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: `wrong ${i}` }, ...from('192.0.2.66') }), 401, 'unauthenticated');
    }
    const throttled = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, ...from('192.0.2.66') });
    expectAdminProblem(throttled, 429, 'too_many_attempts');
    expect(Number(throttled.headers['retry-after'])).toBe(PAIR_RULE.windowMs / 1000);
    // Whoever guessed from there cannot keep the user out from where they are (the old lockout could).
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, ...from('198.51.100.9') })).statusCode).toBe(200);
    clock += PAIR_RULE.windowMs;
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, ...from('192.0.2.66') })).statusCode).toBe(200);
  });

  it(`throttles logins per user from anywhere: ${USER_RULE.maxFailures} failures spread over addresses hold the user back for the window, except where they logged in before`, async () => {
    const { email } = await fresh();
    const login = (address: string) => t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, ...from(address) });
    // Where the user works from: a successful login there is remembered.
    expect((await login('198.51.100.50')).statusCode).toBe(200);
    // Spread so that neither the pair's nor an address's count is reached: only the user's is.
    const addresses = Math.ceil(USER_RULE.maxFailures / (PAIR_RULE.maxFailures - 1));
    for (let i = 0; i < USER_RULE.maxFailures; i++) {
      const attempt = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: `wrong ${i}` }, ...from(`203.0.113.${1 + (i % addresses)}`) });
      expectAdminProblem(attempt, 401, 'unauthenticated');
    }
    expectAdminProblem(await login('198.51.100.77'), 429, 'too_many_attempts');
    // The spray cannot keep them out of where they logged in before.
    expect((await login('198.51.100.50')).statusCode).toBe(200);
    clock += USER_RULE.windowMs;
    expect((await login('198.51.100.77')).statusCode).toBe(200);
  });

  it(`throttles logins per address: ${ADDRESS_RULE.maxFailures} failures for any users, then nobody from there (an IPv6 /64 is one address)`, async () => {
    const { email } = await fresh();
    for (let i = 0; i < ADDRESS_RULE.maxFailures; i++) {
      const attempt = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: `spray${i}@example.com`, password: 'guess' }, ...from(`2001:db8:1:2::${i + 1}`) });
      expectAdminProblem(attempt, 401, 'unauthenticated');
    }
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, ...from('2001:db8:1:2:ffff::1') }), 429, 'too_many_attempts');
    // Another /64, and the same user, are not held back.
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: PASSWORD }, ...from('2001:db8:1:3::1') })).statusCode).toBe(200);
  });

  it('lets a user with a one-time password do nothing but change it, which ends their other sessions', async () => {
    const { email } = await fresh({ owner: true, changeRequired: true });
    const first = await login(t.app, email);
    const second = await login(t.app, email);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: first.read })).json().user.password_change_required).toBe(true);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: first.read }), 403, 'password_change_required');
    const change = (payload: object) => t.app.inject({ method: 'PUT', url: '/admin/v1/session/password', headers: first.write, payload });
    const short = await change({ current_password: PASSWORD, new_password: 'short' });
    expect(expectAdminProblem(short, 400, 'invalid_request').errors).toEqual([{ path: 'new_password', message: 'must be at least 12 characters' }]);
    expectAdminProblem(await change({ current_password: 'not it at all', new_password: 'a brand new password' }), 403, 'forbidden');
    expect((await change({ current_password: PASSWORD, new_password: 'a brand new password' })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: first.read })).statusCode).toBe(200);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: second.read }), 401, 'unauthenticated');
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password: 'a brand new password' } })).statusCode).toBe(200);
  });

  it('never lets an API key call /admin, from API_KEYS or from the store', async () => {
    const stored = await t.app.store.accounts.createKey('keyed', { actor: 'test', seed: { files: await readRuleFiles('rules'), comment: 'test' } });
    const keys = [KEY_A, stored.key];
    await t.app.reloadConfiguration();
    for (const key of keys) {
      for (const [method, url] of [['GET', '/admin/v1/session'], ['GET', '/admin/v1/accounts'], ['POST', '/admin/v1/accounts'], ['GET', '/admin/v1/accounts/default']] as const) {
        const response = await t.app.inject({ method, url, headers: bearer(key), payload: method === 'POST' ? { id: 'by-key' } : undefined });
        expectAdminProblem(response, 401, 'unauthenticated');
      }
      // The key itself works where it belongs.
      expect((await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload: { ip: '81.2.69.160', email: 'a@example.com', event_type: 'account_register' } })).statusCode).toBe(200);
    }
  });

  it('serves the login route to a caller with a stale cookie', async () => {
    const { email } = await fresh();
    const stale = { cookie: `risk_session=${'A'.repeat(43)}` };
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: stale }), 401, 'unauthenticated');
    expect(sessionFrom(await t.app.inject({ method: 'POST', url: '/admin/v1/session', headers: stale, payload: { email, password: PASSWORD } })).csrf).toBeTruthy();
  });
});

describe('regression: an active session expired for idleness with the smallest SESSION_IDLE_TIMEOUT_MS', () => {
  let t: TestApp;
  let clock = Date.parse('2026-11-21T12:00:00Z');

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl('sqlite'), SESSION_IDLE_TIMEOUT_MS: '60000' }, {}, { now: () => clock });
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('keeps a session used every 10 s alive past 60 s, and ends one left unused for 60 s', async () => {
    await createUser(t.app.store, 'busy@example.com');
    const busy = await login(t.app, 'busy@example.com');
    const idle = await login(t.app, 'busy@example.com');
    const whoami = (s: typeof busy) => t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: s.read });
    // Ten minutes of a request every 10 s: last use was once recorded only once a minute, and the
    // expiry tested before the update, so this session ended at the 60th second.
    for (let second = 10; second <= 600; second += 10) {
      clock += 10_000;
      expect((await whoami(busy)).statusCode, `at ${second} s`).toBe(200);
    }
    // Used every 50 s (the idle timeout less the write interval) it lives on too.
    for (let i = 0; i < 5; i++) {
      clock += 50_000;
      expect((await whoami(busy)).statusCode).toBe(200);
    }
    expectAdminProblem(await whoami(idle), 401, 'unauthenticated');
    clock += 60_000;
    expect((await whoami(busy)).json().detail).toBe('The session has expired; log in again');
  });
});
