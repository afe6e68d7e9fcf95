import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { createUser, expectAdminProblem } from '../support/admin.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';
import { signInAtProvider, startTestProvider, type TestProvider } from '../support/oidc.js';

/**
 * OpenID Connect sign-in with the real app against a real provider (oidc-provider) on loopback:
 * the service's HTTP calls (discovery, keys, token) go to 127.0.0.1 only; on both store engines. The service's clock is
 * injected: a token past its expiry is one that arrives after it, with nothing slept.
 *
 * Each fault the issue names is refused with its reason on the console's login page and in the
 * audit log: a wrong issuer, a replayed code, a wrong nonce, an expired token, and a person the
 * provider knows but no console user is.
 */
const REDIRECT = 'http://console.test/admin/v1/oidc/callback';
const oidcEnv = (provider: TestProvider, issuer = provider.issuer) => ({
  OIDC_ISSUER: issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, OIDC_REDIRECT_URL: REDIRECT, OIDC_NAME: 'Test SSO',
});

const cookieOf = (response: LightMyRequestResponse, name: string): string | undefined => {
  const lines = ([] as string[]).concat(response.headers['set-cookie'] ?? []);
  return lines.map((line) => line.split(';')[0]!).find((pair) => pair.startsWith(`${name}=`));
};

describe.each(ENGINES)('single sign-on (OpenID Connect, authorization code with PKCE) on %s', (engine: EngineName) => {
  let provider: TestProvider;
  let t: TestApp;
  let clock = Date.now();

  /** The service's first leg: the provider's URL and the flow cookie. */
  async function start(app = t.app) {
    const started = await app.inject({ method: 'GET', url: '/admin/v1/oidc/login' });
    expect(started.statusCode, started.body).toBe(303);
    return { location: String(started.headers.location), flow: cookieOf(started, 'risk_oidc')! };
  }
  /** The service's second leg with what the provider sent the browser back with. */
  const callback = (returnedTo: string, flow: string | undefined, app = t.app) =>
    app.inject({ method: 'GET', url: `/admin/v1/oidc/callback${new URL(returnedTo).search}`, headers: flow ? { cookie: flow } : {} });
  async function signIn(login: string) {
    const { location, flow } = await start();
    const returnedTo = await signInAtProvider(location, login);
    return { returnedTo, flow, answer: await callback(returnedTo, flow) };
  }
  const refusedWith = (answer: LightMyRequestResponse, reason: string) => {
    expect(answer.statusCode, answer.body).toBe(303);
    expect(answer.headers.location).toBe(`/console/?sign_in_error=${reason}`);
    expect(cookieOf(answer, 'risk_session')).toBeUndefined();
    expect(cookieOf(answer, 'risk_oidc')).toBe('risk_oidc=');
  };
  const lastAudit = async () => (await t.app.store.audit({}))[0]!;
  /** What the log says of the last refusal: the check that failed. */
  const lastRefusal = () => t.logs.lines.filter((line) => line.msg === 'single sign-on refused').at(-1)?.detail;

  beforeAll(async () => {
    provider = await startTestProvider({
      alice: { email: 'Alice@Example.com' },
      bob: { email: 'bob@example.com' },
      stranger: { email: 'stranger@elsewhere.test' },
      unverified: { email: 'carol@example.com', email_verified: false },
    });
    provider.serve(REDIRECT);
    t = await startTestApp({ ...oidcEnv(provider), DATABASE_URL: await freshDatabaseUrl(engine) }, {}, { now: () => clock });
    await createUser(t.app.store, 'alice@example.com', { roles: {} });
    await createUser(t.app.store, 'carol@example.com');
    const bob = await createUser(t.app.store, 'bob@example.com');
    await t.app.store.users.update(bob.id, { status: 'disabled' }, 'test');
  });
  afterAll(async () => {
    await t.app.close();
    await provider.close();
  });

  it('offers the provider and passwords on the login page', async () => {
    const options = await t.app.inject({ method: 'GET', url: '/admin/v1/sign-in' });
    expect(options.json()).toEqual({ password: true, single_sign_on: { name: 'Test SSO', url: '/admin/v1/oidc/login' } });
  });

  it('sends the browser to the provider with PKCE (S256), state and nonce, in a Lax cookie of its own', async () => {
    const started = await t.app.inject({ method: 'GET', url: '/admin/v1/oidc/login' });
    const url = new URL(String(started.headers.location));
    expect(url.origin).toBe(provider.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: provider.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid email profile', code_challenge_method: 'S256',
    });
    for (const name of ['state', 'nonce', 'code_challenge']) expect(url.searchParams.get(name)).toMatch(/^[\w-]{43,}$/);
    expect(String(started.headers['set-cookie'])).toMatch(/^risk_oidc=[\w-]+; Path=\/admin\/v1\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/);
  });

  it('signs a known user in: a session like a password\'s, audited with the provider\'s subject', async () => {
    const { answer } = await signIn('alice');
    expect(answer.statusCode, answer.body).toBe(303);
    expect(answer.headers.location).toBe('/console/');
    expect(cookieOf(answer, 'risk_oidc')).toBe('risk_oidc=');
    const session = cookieOf(answer, 'risk_session')!;
    const me = await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: session } });
    expect(me.statusCode).toBe(200);
    expect(me.json().user.email).toBe('alice@example.com');
    expect(me.json().csrf_token).toMatch(/^[\w-]{43}$/);
    const entry = await lastAudit();
    expect(entry).toMatchObject({ action: 'user.sso_login', actor: `user:${me.json().user.id}`, after: { issuer: `${provider.issuer}/`, subject: 'alice' } });
  });

  it('refuses a person the provider knows but no console user is, and says so', async () => {
    const { answer } = await signIn('stranger');
    refusedWith(answer, 'unknown_user');
    expect(await lastAudit()).toMatchObject({ action: 'user.sso_refused', actor: 'sso', after: { reason: 'unknown_user', subject: 'stranger' } });
    expect(JSON.stringify(t.logs.raw)).not.toContain('stranger@elsewhere.test');
  });

  it('refuses a disabled user as an unknown one', async () => {
    refusedWith((await signIn('bob')).answer, 'unknown_user');
  });

  it('refuses an address the provider marks unverified', async () => {
    refusedWith((await signIn('unverified')).answer, 'email_missing');
  });

  it('refuses a replayed code: the provider will not exchange it twice', async () => {
    const { returnedTo, flow, answer } = await signIn('alice');
    expect(answer.headers.location).toBe('/console/');
    const again = await callback(returnedTo, flow);
    refusedWith(again, 'provider_refused');
    expect(lastRefusal()).toMatch(/invalid_grant/);
    expect(await lastAudit()).toMatchObject({ action: 'user.sso_refused', after: { reason: 'provider_refused' } });
  });

  it('refuses an ID token whose nonce is not the one this browser\'s sign-in asked for', async () => {
    const { location, flow } = await start();
    const tampered = new URL(location);
    tampered.searchParams.set('nonce', 'a-nonce-planted-by-someone-else-0123456789abc');
    const returnedTo = await signInAtProvider(tampered.href, 'alice');
    refusedWith(await callback(returnedTo, flow), 'invalid_token');
    expect(lastRefusal()).toMatch(/claim nonce$/);
  });

  it('refuses an ID token that arrives after it expired (the provider\'s tokens live an hour)', async () => {
    const real = clock;
    clock = Date.now() + 2 * 3_600_000;
    try {
      refusedWith((await signIn('alice')).answer, 'invalid_token');
      expect(lastRefusal()).toMatch(/claim exp$/);
    } finally {
      clock = real;
    }
  });

  it('refuses a callback without this browser\'s flow cookie, or with another state (login CSRF)', async () => {
    const { location, flow } = await start();
    const returnedTo = await signInAtProvider(location, 'alice');
    refusedWith(await callback(returnedTo, undefined), 'sign_in_expired');
    const other = await start();
    refusedWith(await callback(returnedTo, other.flow), 'sign_in_expired');
    // The flow is finished once, whatever happened: its cookie was cleared above; the code itself was never spent.
    expect((await callback(returnedTo, flow)).headers.location).toBe('/console/');
  });

  it('refuses a flow older than ten minutes', async () => {
    const { location, flow } = await start();
    const returnedTo = await signInAtProvider(location, 'alice');
    clock += 11 * 60_000;
    refusedWith(await callback(returnedTo, flow), 'sign_in_expired');
  });

  it('shows the provider\'s own refusal (the person cancelled)', async () => {
    const { flow } = await start();
    const state = JSON.parse(Buffer.from(flow.slice('risk_oidc='.length), 'base64url').toString()).state as string;
    refusedWith(await callback(`${REDIRECT}?error=access_denied&state=${state}&iss=${encodeURIComponent(provider.issuer)}`, flow), 'provider_refused');
  });

  it('refuses every sign-in when the provider answers as another issuer than OIDC_ISSUER', async () => {
    const wrong = await startTestApp(oidcEnv(provider, provider.issuer.replace('127.0.0.1', 'localhost')));
    try {
      const started = await wrong.app.inject({ method: 'GET', url: '/admin/v1/oidc/login' });
      expect(started.statusCode).toBe(303);
      expect(started.headers.location).toBe('/console/?sign_in_error=provider_unavailable');
      const refusal = wrong.logs.lines.find((line) => line.msg === 'single sign-on refused');
      expect(refusal).toMatchObject({ reason: 'provider_unavailable', detail: expect.stringMatching(/issuer does not match the expected issuer/) });
    } finally {
      await wrong.app.close();
    }
  });
});

describe('local passwords turned off (PASSWORD_LOGIN=false)', () => {
  let provider: TestProvider;
  let t: TestApp;

  beforeAll(async () => {
    provider = await startTestProvider({ dave: { email: 'dave@example.com' } });
    provider.serve(REDIRECT);
    t = await startTestApp({ ...oidcEnv(provider), PASSWORD_LOGIN: 'false' });
    // A user an owner just made has a one-time password: with passwords off it holds nothing back.
    await createUser(t.app.store, 'dave@example.com', { changeRequired: true });
  });
  afterAll(async () => {
    await t.app.close();
    await provider.close();
  });

  it('refuses a password, right or wrong, and says where to sign in', async () => {
    const answer = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'dave@example.com', password: 'a long test password 1' } });
    expectAdminProblem(answer, 403, 'password_login_disabled');
    expect(answer.json().detail).toContain('Test SSO');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/sign-in' })).json().password).toBe(false);
  });

  it('signs the user in through the provider, and a one-time password is no reason to hold them back', async () => {
    const started = await t.app.inject({ method: 'GET', url: '/admin/v1/oidc/login' });
    const returnedTo = await signInAtProvider(String(started.headers.location), 'dave');
    const answer = await t.app.inject({ method: 'GET', url: `/admin/v1/oidc/callback${new URL(returnedTo).search}`, headers: { cookie: cookieOf(started, 'risk_oidc')! } });
    const session = cookieOf(answer, 'risk_session')!;
    const me = await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: session } });
    expect(me.json().user).toMatchObject({ email: 'dave@example.com', password_change_required: false });
    const accounts = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: { cookie: session } });
    expect(accounts.statusCode).toBe(200);
  });
});

describe('single sign-on settings', () => {
  const base = { OIDC_ISSUER: 'https://login.example.com/realms/acme', OIDC_CLIENT_ID: 'risk', OIDC_CLIENT_SECRET: 's3cret', OIDC_REDIRECT_URL: 'https://risk.example.com/admin/v1/oidc/callback' };
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };

  it('are read together, with defaults for the scopes, the claim and the name', () => {
    expect(loadConfig(base).signIn).toEqual({
      passwords: true,
      oidc: {
        issuer: new URL(base.OIDC_ISSUER), clientId: 'risk', clientSecret: 's3cret', redirectUrl: new URL(base.OIDC_REDIRECT_URL),
        scopes: 'openid email profile', emailClaim: 'email', name: 'single sign-on',
      },
    });
    expect(loadConfig({}).signIn).toEqual({ passwords: true, oidc: null });
  });

  it('name each variable that is wrong or missing', () => {
    expect(problemsOf({ OIDC_ISSUER: base.OIDC_ISSUER })).toEqual([expect.stringContaining('go together: OIDC_ISSUER set without the others')]);
    expect(problemsOf({ PASSWORD_LOGIN: 'false' })).toEqual([expect.stringMatching(/^PASSWORD_LOGIN: can be false only with single sign-on/)]);
    expect(problemsOf({ ...base, OIDC_REDIRECT_URL: 'https://risk.example.com/callback' })).toEqual([expect.stringMatching(/^OIDC_REDIRECT_URL: must be .* \/admin\/v1\/oidc\/callback$/)]);
    expect(problemsOf({ ...base, OIDC_ISSUER: 'ftp://x' })).toEqual([expect.stringMatching(/^OIDC_ISSUER: must be an http\(s\) URL/)]);
    expect(problemsOf({ ...base, OIDC_SCOPES: 'email profile' })).toEqual(['OIDC_SCOPES: must include openid']);
  });
});
