import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAIR_RULE } from '../../src/admin/routes/session.js';
import { base32, fromBase32, hotp, stepAt, totpAt, TOTP_STEP_SECONDS } from '../../src/admin/totp.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login, PASSWORD, sessionFrom } from '../support/admin.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * TOTP two-factor through HTTP with the real app, on both engines, with an injected clock: enrolment
 * (secret, URI, QR code drawn locally), confirmation with recovery codes, login with a code, a wrong
 * or replayed code refused and throttled like a password, a recovery code good once, an owner's
 * reset, all audited.
 */
describe('TOTP (RFC 6238) codes', () => {
  it('gives the RFC 6238 appendix B codes for its SHA-1 secret (the last six digits)', () => {
    const secret = base32(Buffer.from('12345678901234567890'));
    expect(fromBase32(secret).toString()).toBe('12345678901234567890');
    // RFC 6238 Appendix B, SHA1 column, 8 digits; a 6-digit code is the same number mod 10^6.
    for (const [seconds, eight] of [[59, '94287082'], [1111111109, '07081804'], [1234567890, '89005924'], [2000000000, '69279037']] as const) {
      expect(totpAt(secret, seconds * 1000)).toBe(eight.slice(2));
    }
    // RFC 4226 Appendix D, HOTP counter 0 and 9.
    expect(hotp(secret, 0)).toBe('755224');
    expect(hotp(secret, 9)).toBe('520489');
  });
});

describe.each(ENGINES)('two-factor login on %s', (engine: EngineName) => {
  let t: TestApp;
  let clock = Date.parse('2026-11-21T12:00:00Z');
  let n = 0;
  const fresh = async (options: Parameters<typeof createUser>[2] = {}) => {
    const email = `tf${(n += 1)}@example.com`;
    return { email, user: await createUser(t.app.store, email, options) };
  };
  const post = (payload: object, remoteAddress = '192.0.2.1') => t.app.inject({ method: 'POST', url: '/admin/v1/session', payload, remoteAddress });

  /** Enrols the user of a fresh session; resolves with the secret and the recovery codes. */
  async function enrol(email: string) {
    const session = await login(t.app, email);
    const started = await t.app.inject({ method: 'POST', url: '/admin/v1/session/totp', headers: session.write });
    expect(started.statusCode).toBe(201);
    const { secret, otpauth_uri, qr_code } = started.json();
    const confirmed = await t.app.inject({ method: 'PUT', url: '/admin/v1/session/totp', headers: session.write, payload: { code: totpAt(secret, clock) } });
    expect(confirmed.statusCode).toBe(200);
    return { session, secret: secret as string, otpauth_uri: otpauth_uri as string, qr_code: qr_code as string, recovery: confirmed.json().recovery_codes as string[] };
  }

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) }, {}, { now: () => clock });
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('enrols with a QR code drawn by the service, confirmed by a code, and answers recovery codes once', async () => {
    const { email, user } = await fresh();
    const session = await login(t.app, email);
    const started = (await t.app.inject({ method: 'POST', url: '/admin/v1/session/totp', headers: session.write })).json();
    expect(started.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.otpauth_uri).toBe(`otpauth://totp/Risk%20console%3A${encodeURIComponent(email)}?secret=${started.secret}&issuer=Risk%20console&algorithm=SHA1&digits=6&period=30`);
    expect(started.qr_code).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(started.qr_code.split(',')[1], 'base64').toString()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    // Not on until confirmed: logging in still needs only the password.
    expect((await post({ email, password: PASSWORD })).statusCode).toBe(200);
    const wrong = await t.app.inject({ method: 'PUT', url: '/admin/v1/session/totp', headers: session.write, payload: { code: '000000' === totpAt(started.secret, clock) ? '111111' : '000000' } });
    expect(expectAdminProblem(wrong, 400, 'invalid_request').errors).toEqual([{ path: 'code', message: expect.stringMatching(/does not match/) }]);
    const confirmed = await t.app.inject({ method: 'PUT', url: '/admin/v1/session/totp', headers: session.write, payload: { code: totpAt(started.secret, clock) } });
    const codes = confirmed.json().recovery_codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    // Only their hashes are kept.
    const stored = await t.app.store.engine.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', user.id).execute();
    expect(stored).toHaveLength(10);
    expect(JSON.stringify(stored)).not.toContain(codes[0]!.replace(/-/g, ''));
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: session.read })).json().user.two_factor).toBe(true);
    // A second enrolment would replace the factor: only an owner may remove it.
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/session/totp', headers: session.write }), 409, 'conflict');
    const audit = (await t.app.store.audit()).filter((e) => e.target === user.id).map((e) => e.action);
    expect(audit.slice(0, 2)).toEqual(['user.totp.enrol', 'user.totp.start']);
  });

  it('asks for a code after the right password, takes the current one once, and refuses a wrong or replayed one', async () => {
    const { email } = await fresh();
    const { secret } = await enrol(email);
    clock += TOTP_STEP_SECONDS * 1000;
    const asked = await post({ email, password: PASSWORD });
    expect(expectAdminProblem(asked, 401, 'second_factor_required').errors).toEqual([{ path: 'totp_code', message: 'required for this user' }]);
    expect(asked.headers['set-cookie']).toBeUndefined();
    // The wrong password with a right code is the wrong password.
    expect(expectAdminProblem(await post({ email, password: 'not it at all', totp_code: totpAt(secret, clock) }), 401, 'unauthenticated').detail).toBe('Wrong e-mail address or password');
    const code = totpAt(secret, clock);
    const wrongCode = code === '123456' ? '654321' : '123456';
    expect(expectAdminProblem(await post({ email, password: PASSWORD, totp_code: wrongCode }), 401, 'unauthenticated').detail).toMatch(/^Wrong code/);
    expect(sessionFrom(await post({ email, password: PASSWORD, totp_code: code })).csrf).toBeTruthy();
    // The same code again, even within its 30 s: refused.
    expect(expectAdminProblem(await post({ email, password: PASSWORD, totp_code: code }), 401, 'unauthenticated').detail).toMatch(/already used/);
    // The previous step's code after a later one was used: refused too.
    expectAdminProblem(await post({ email, password: PASSWORD, totp_code: hotp(secret, stepAt(clock) - 1) }), 401, 'unauthenticated');
    // A code from five minutes ago is out of the window.
    clock += TOTP_STEP_SECONDS * 1000;
    expectAdminProblem(await post({ email, password: PASSWORD, totp_code: hotp(secret, stepAt(clock) - 10) }), 401, 'unauthenticated');
    // The next step's code works.
    expect((await post({ email, password: PASSWORD, totp_code: totpAt(secret, clock) })).statusCode).toBe(200);
  });

  it(`throttles wrong codes as wrong passwords: after ${PAIR_RULE.maxFailures}, even the right code waits`, async () => {
    const { email } = await fresh();
    const { secret } = await enrol(email);
    clock += TOTP_STEP_SECONDS * 1000;
    const right = totpAt(secret, clock);
    for (let i = 0; i < PAIR_RULE.maxFailures; i++) {
      const guess = String((Number(right) + 1 + i) % 1_000_000).padStart(6, '0');
      expectAdminProblem(await post({ email, password: PASSWORD, totp_code: guess }, '192.0.2.99'), 401, 'unauthenticated');
    }
    expectAdminProblem(await post({ email, password: PASSWORD, totp_code: right }, '192.0.2.99'), 429, 'too_many_attempts');
    clock += PAIR_RULE.windowMs;
    expect((await post({ email, password: PASSWORD, totp_code: totpAt(secret, clock) }, '192.0.2.99')).statusCode).toBe(200);
  });

  it('takes each recovery code once, audited', async () => {
    const { email, user } = await fresh();
    const { recovery } = await enrol(email);
    expect((await post({ email, password: PASSWORD, recovery_code: recovery[0]!.toUpperCase() })).statusCode).toBe(200);
    expect(expectAdminProblem(await post({ email, password: PASSWORD, recovery_code: recovery[0]! }), 401, 'unauthenticated').detail).toBe('Unknown or already used recovery code');
    expect((await post({ email, password: PASSWORD, recovery_code: recovery[1]! })).statusCode).toBe(200);
    const used = (await t.app.store.audit()).filter((e) => e.target === user.id && e.action === 'user.recovery_code.use');
    expect(used.map((e) => e.after)).toEqual([{ left: 8 }, { left: 9 }]);
  });

  it('lets only an owner reset a user\'s authenticator, which ends their sessions and lets them enrol again', async () => {
    const { email: ownerEmail } = await fresh({ owner: true });
    const owner = await login(t.app, ownerEmail);
    const { email, user } = await fresh({ roles: {} });
    const { session } = await enrol(email);
    // The user themselves (or a stolen session of theirs) cannot turn it off.
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `/admin/v1/users/${user.id}/totp`, headers: session.write }), 403, 'forbidden');
    expect((await t.app.inject({ method: 'DELETE', url: `/admin/v1/users/${user.id}/totp`, headers: owner.write })).statusCode).toBe(204);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: session.read }), 401, 'unauthenticated');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `/admin/v1/users/${user.id}/totp`, headers: owner.write }), 404, 'resource_not_found');
    const reset = (await t.app.store.audit()).find((e) => e.target === user.id && e.action === 'user.totp.reset')!;
    expect(reset.actor).toMatch(/^user:usr_/);
    // Password alone again, until they enrol anew.
    expect((await post({ email, password: PASSWORD })).statusCode).toBe(200);
    clock += TOTP_STEP_SECONDS * 1000;
    await enrol(email);
  });
});

describe('TWO_FACTOR_REQUIRED=true', () => {
  let t: TestApp;
  const clock = Date.parse('2026-11-21T12:00:00Z');

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl('sqlite'), TWO_FACTOR_REQUIRED: 'true' }, {}, { now: () => clock });
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('lets a user without an authenticator do nothing but set one up, then everything their role allows', async () => {
    await createUser(t.app.store, 'must@example.com', { roles: { default: 'admin' } });
    const session = await login(t.app, 'must@example.com');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: session.read })).json().user).toMatchObject({ two_factor: false, two_factor_setup_required: true });
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/decisions', headers: session.read }), 403, 'two_factor_setup_required');
    const { secret } = (await t.app.inject({ method: 'POST', url: '/admin/v1/session/totp', headers: session.write })).json();
    expect((await t.app.inject({ method: 'PUT', url: '/admin/v1/session/totp', headers: session.write, payload: { code: totpAt(secret, clock) } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/decisions', headers: session.read })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: session.read })).json().user).toMatchObject({ two_factor: true, two_factor_setup_required: false });
  });
});

describe('two-factor required of one user by an owner (migration 0015)', () => {
  let t: TestApp;
  const clock = Date.parse('2026-11-21T12:00:00Z');

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl('sqlite') }, {}, { now: () => clock });
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('holds that user, from their next request, to setting it up, audited; others are untouched; only an owner sets it', async () => {
    await createUser(t.app.store, 'boss@example.com', { owner: true });
    const held = await createUser(t.app.store, 'held@example.com', { roles: { default: 'admin' } });
    await createUser(t.app.store, 'free@example.com', { roles: { default: 'admin' } });
    const owner = await login(t.app, 'boss@example.com');
    const session = await login(t.app, 'held@example.com');
    const other = await login(t.app, 'free@example.com');
    const decisions = (s: typeof session) => t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/decisions', headers: s.read });
    expect((await decisions(session)).statusCode).toBe(200);

    // An account admin is no owner: the setting is not theirs.
    expectAdminProblem(await t.app.inject({ method: 'PATCH', url: `/admin/v1/users/${held.id}`, headers: other.write, payload: { two_factor_required: true } }), 403, 'forbidden');
    const set = await t.app.inject({ method: 'PATCH', url: `/admin/v1/users/${held.id}`, headers: owner.write, payload: { two_factor_required: true } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ two_factor_required: true });
    const [entry] = await t.app.store.audit({});
    expect(entry).toMatchObject({ action: 'user.update', target: held.id, before: { two_factor_required: false }, after: { two_factor_required: true } });

    // The session they already have is held from its next request.
    expectAdminProblem(await decisions(session), 403, 'two_factor_setup_required');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: session.read })).json().user).toMatchObject({ two_factor_setup_required: true });
    expect((await decisions(other)).statusCode).toBe(200);
    // A fresh login says so at once.
    expect((await login(t.app, 'held@example.com')).csrf).toBeTruthy();
    const fresh = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'held@example.com', password: PASSWORD } });
    expect(fresh.json().user).toMatchObject({ two_factor: false, two_factor_setup_required: true });

    const { secret } = (await t.app.inject({ method: 'POST', url: '/admin/v1/session/totp', headers: session.write })).json();
    expect((await t.app.inject({ method: 'PUT', url: '/admin/v1/session/totp', headers: session.write, payload: { code: totpAt(secret, clock) } })).statusCode).toBe(200);
    expect((await decisions(session)).statusCode).toBe(200);
  });
});
