import { hash } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import { problems } from '../../http/problem.js';
import { ipv6ToWords } from '../../ip/numeric.js';
import type { ThrottleRule } from '../../store/login-throttle.js';
import { normaliseEmail } from '../../store/users.js';
import { roleIn, type Principal } from '../access.js';
import { decoyHash, hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem, verifyPassword } from '../password.js';
import { adminRoute, type AdminServices } from '../route.js';
import { accountId, accountRole, accountStatus, iso, loginEmail, time } from '../schemas.js';
import { clearSessionCookie, csrfTokenOf, hashSessionId, newSessionId, setSessionCookie } from '../session.js';
import { useSetupToken } from '../setup.js';
import { hashRecoveryCode, matchingStep } from '../totp.js';

/**
 * Logging in and out, who am I, changing one's password, and the first owner's setup.
 *
 * Login throttling (in the store, so every replica counts the same failures), three counts per
 * window: `PAIR_RULE.maxFailures` wrong passwords for one e-mail address from one client address,
 * `USER_RULE.maxFailures` for one e-mail address from anywhere, and `ADDRESS_RULE.maxFailures` from
 * one client address for any users (an IPv6 address counts by its /64); past any of them, 429 with
 * Retry-After until the window ends. The check comes before the password is hashed, so a throttled
 * guesser costs one indexed read. Why a pair and a user-wide count: with a lockout per e-mail
 * address alone, anyone who knows an admin's address could keep them out with five wrong guesses a
 * quarter-hour. The user-wide count stops guessing spread over many addresses (at most
 * `USER_RULE.maxFailures` tries at one user a window), and it does not hold back a user logging in
 * from an address they logged in from successfully in the last 30 days (KNOWN_PAIR_MS): an attacker
 * with many addresses can keep a user out only of places they have never logged in from. A correct
 * password clears its pair's count, not the user's or the address's (one good password does not
 * excuse a spray).
 */
export const PAIR_RULE: ThrottleRule = { maxFailures: 5, windowMs: 15 * 60_000 };
export const USER_RULE: ThrottleRule = { maxFailures: 50, windowMs: 15 * 60_000, sparesKnownPairs: true };
export const ADDRESS_RULE: ThrottleRule = { maxFailures: 20, windowMs: 15 * 60_000 };

const userKey = (email: string) => `user:${hash('sha256', normaliseEmail(email), 'hex')}`;
function addressKey(ip: string): string {
  if (isIP(ip) !== 6 || ip.startsWith('::ffff:')) return `ip:${ip.replace(/^::ffff:/, '')}`;
  // One subscriber usually holds a whole /64: counting addresses inside it would give them 2^64 tries.
  const words = ipv6ToWords(ip);
  return `ip:${words[0]!.toString(16)}:${words[1]!.toString(16)}::/64`;
}
/** The counts a login of `email` from `ip` is held to; the first is the pair's (cleared by a success). */
const loginKeys = (email: string, ip: string) => [
  { key: `${userKey(email)}|${addressKey(ip)}`, rule: PAIR_RULE },
  { key: userKey(email), rule: USER_RULE },
  { key: addressKey(ip), rule: ADDRESS_RULE },
];

const sessionInfo = z.object({
  kind: z.enum(['user', 'token']),
  user: z.object({ id: z.string(), email: z.string(), owner: z.boolean(), password_change_required: z.boolean(), two_factor: z.boolean().describe('A TOTP authenticator is confirmed: logging in needs its code'), two_factor_setup_required: z.boolean().describe('TWO_FACTOR_REQUIRED is on, or an owner requires it of this user, and the user has no authenticator: nothing else is allowed until they set one up') }).nullable(),
  token: z.object({ id: z.string(), name: z.string() }).nullable(),
  accounts: z.array(z.object({ id: accountId, name: z.string(), status: accountStatus, role: accountRole })),
  csrf_token: z.string().nullable().describe('Send it as `X-CSRF-Token` with every write made with the session cookie; null for a token'),
  session: z.object({ created_at: time, expires_at: time, idle_expires_at: time }).nullable(),
});

const sessionExample = {
  kind: 'user' as const,
  user: { id: 'usr_4f1c2a9b7d3e8f60', email: 'ops@example.com', owner: true, password_change_required: false, two_factor: true, two_factor_setup_required: false },
  token: null,
  accounts: [{ id: 'acme', name: 'Acme Ltd', status: 'active' as const, role: 'admin' as const }],
  csrf_token: 'k9W3m0Jq2vXbT8sYh5LcN1eRzU7aP4dG6fQ0oI2wE8y',
  session: { created_at: '2026-11-21T12:00:00.000Z', expires_at: '2026-11-22T00:00:00.000Z', idle_expires_at: '2026-11-21T12:30:00.000Z' },
};

async function sessionAnswer(principal: Principal, services: AdminServices, csrfToken: string | null): Promise<z.output<typeof sessionInfo>> {
  const rows = await services.store.accounts.rows();
  const accounts = rows.flatMap((row) => {
    const role = roleIn(principal, row.id);
    return role === undefined ? [] : [{ id: row.id, name: row.name, status: row.status, role }];
  });
  const session = principal.session;
  const twoFactor = principal.kind === 'user' && (await services.store.secondFactors.totp(principal.id))?.confirmed_at != null;
  const required = principal.kind === 'user' && (services.sessions.twoFactorRequired || (await services.store.users.get(principal.id))?.two_factor_required === true);
  return {
    kind: principal.kind === 'token' ? 'token' : 'user',
    user: principal.kind === 'user' ? { id: principal.id, email: principal.email!, owner: principal.owner, password_change_required: principal.passwordChangeRequired, two_factor: twoFactor, two_factor_setup_required: required && !twoFactor } : null,
    token: principal.kind === 'token' ? { id: principal.id, name: principal.tokenName! } : null,
    accounts,
    csrf_token: csrfToken,
    session: session
      ? { created_at: iso(session.createdAt), expires_at: iso(session.createdAt + services.sessions.maxAgeMs), idle_expires_at: iso(session.lastSeenAt + services.sessions.idleTimeoutMs) }
      : null,
  };
}

const password = z.string().min(1).max(PASSWORD_MAX_LENGTH);

/**
 * The second step of a login, for a user with a confirmed authenticator: a code of a time step
 * later than the last one accepted, or an unspent recovery code. A wrong one counts as a failed
 * login (the same throttle as passwords: a guesser with the password gets PAIR_RULE's tries).
 */
async function secondFactor(services: AdminServices, userId: string, body: { totp_code?: string; recovery_code?: string }, keys: ReturnType<typeof loginKeys>, now: number): Promise<void> {
  const factors = services.store.secondFactors;
  const factor = await factors.totp(userId);
  if (!factor || factor.confirmed_at === null) return;
  if (body.totp_code === undefined && body.recovery_code === undefined) throw problems.secondFactorRequired();
  let accepted: boolean;
  if (body.totp_code !== undefined) {
    const step = matchingStep(factor.secret, body.totp_code, now);
    accepted = step !== undefined && (await factors.spendStep(userId, step));
  } else {
    accepted = await factors.spendRecoveryCode(userId, hashRecoveryCode(body.recovery_code!), now);
  }
  if (!accepted) {
    await services.store.loginThrottle.recordFailure(keys, now);
    throw problems.unauthenticated(body.totp_code !== undefined ? 'Wrong code, or one already used: wait for the next one' : 'Unknown or already used recovery code');
  }
}

export const login = adminRoute({
  method: 'POST', url: '/session', tag: 'session', operationId: 'login',
  summary: 'Log in: sets the session cookie and returns the CSRF token',
  description: 'The cookie (`risk_session`, HttpOnly, SameSite=Strict, Path=/admin/v1, Secure over TLS) authenticates later requests; every write made with it must send `X-CSRF-Token`. ' +
    `Failed logins are throttled per e-mail address and client address (${PAIR_RULE.maxFailures} per ${PAIR_RULE.windowMs / 60_000} min), per e-mail address from any addresses (${USER_RULE.maxFailures} per ${USER_RULE.windowMs / 60_000} min) and per client address (${ADDRESS_RULE.maxFailures} per ${ADDRESS_RULE.windowMs / 60_000} min).`,
  access: { role: 'public' },
  body: z.object({
    email: loginEmail, password,
    totp_code: z.string().trim().max(16).optional().describe('For a user with two-factor on: the code the authenticator app shows'),
    recovery_code: z.string().trim().max(64).optional().describe('Instead of totp_code: one of the recovery codes, each good once'),
  }),
  example: { email: 'ops@example.com', password: 'correct horse battery staple' },
  success: { status: 200, description: 'Logged in', schema: sessionInfo, example: sessionExample },
  problems: {
    403: '`password_login_disabled`: PASSWORD_LOGIN=false, sign in through the provider (`GET /admin/v1/sign-in`)',
    401: 'Wrong e-mail address or password (the same answer for both, and for a disabled user); wrong, reused or expired code; or `second_factor_required`: the password was right, now send it with a code',
    429: 'Too many failed logins for this user or address (`Retry-After`)',
  },
  handler: async ({ body, request, reply, services, now }) => {
    const { store } = services;
    // Before anything is read or counted: with passwords off there is nothing to guess.
    if (!services.config.signIn.passwords) throw problems.passwordLoginDisabled(services.singleSignOn?.name ?? 'single sign-on');
    const keys = loginKeys(body.email, request.ip);
    const pair = keys[0]!.key;
    const wait = await store.loginThrottle.blockedFor(keys, now, pair);
    if (wait > 0) throw problems.tooManyAttempts(Math.ceil(wait / 1000), 'Too many failed logins for this user or from this address');
    const credentials = await store.users.credentials(body.email);
    const matches = await verifyPassword(body.password, credentials?.password_hash ?? (await decoyHash()));
    if (!credentials || !matches || credentials.status !== 'active') {
      await store.loginThrottle.recordFailure(keys, now);
      throw problems.unauthenticated('Wrong e-mail address or password');
    }
    await secondFactor(services, credentials.id, body, keys, now);
    await store.loginThrottle.succeeded(pair, now);
    await store.sessions.prune(now - services.sessions.maxAgeMs, now - services.sessions.idleTimeoutMs);
    const sessionId = newSessionId();
    await store.sessions.create(hashSessionId(sessionId), credentials.id, now);
    setSessionCookie(request, reply, sessionId, services.sessions.maxAgeMs);
    const user = (await store.users.get(credentials.id))!;
    const principal: Principal = {
      kind: 'user', id: user.id, actor: `user:${user.id}`, owner: user.owner, email: user.email,
      roles: new Map(user.memberships.map((m) => [m.account_id, m.role])), passwordChangeRequired: user.password_change_required,
      session: { idHash: hashSessionId(sessionId), csrfToken: csrfTokenOf(sessionId), createdAt: now, lastSeenAt: now },
    };
    return sessionAnswer(principal, services, principal.session!.csrfToken);
  },
});

export const whoAmI = adminRoute({
  method: 'GET', url: '/session', tag: 'session', operationId: 'getSession',
  summary: 'Who am I: the user or token, its accounts and roles, and the session\'s CSRF token',
  access: { role: 'signed-in' },
  accessOptions: { duringPasswordChange: true },
  success: { status: 200, description: 'The caller', schema: sessionInfo, example: sessionExample },
  handler: async ({ principal, services }) => sessionAnswer(principal, services, principal.session?.csrfToken ?? null),
});

export const logout = adminRoute({
  method: 'DELETE', url: '/session', tag: 'session', operationId: 'logout',
  summary: 'Log out: ends the session in every replica and clears the cookie',
  access: { role: 'signed-in' },
  accessOptions: { duringPasswordChange: true, sessionOnly: true },
  success: { status: 204, description: 'Logged out' },
  handler: async ({ principal, request, reply, services }) => {
    await services.store.sessions.delete(principal.session!.idHash);
    clearSessionCookie(request, reply);
  },
});

export const changePassword = adminRoute({
  method: 'PUT', url: '/session/password', tag: 'session', operationId: 'changePassword',
  summary: 'Change one\'s own password; ends the user\'s other sessions',
  description: `A one-time password (from \`npm run admin\` or a reset) allows nothing else until it is changed. The new password: ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters, not the e-mail address. A wrong current password counts as a failed login of the user.`,
  access: { role: 'signed-in' },
  accessOptions: { duringPasswordChange: true, sessionOnly: true },
  body: z.object({ current_password: password, new_password: password }),
  example: { current_password: 'Vh3kq9ZtYb2mL0xWcR4a', new_password: 'correct horse battery staple' },
  success: { status: 204, description: 'Changed' },
  problems: { 403: 'The current password is wrong', 429: 'Too many wrong passwords for this user (`Retry-After`)' },
  handler: async ({ body, principal, request, services, now }) => {
    const problem = passwordProblem(body.new_password, principal.email);
    if (problem !== null) throw problems.invalidRequest([{ path: 'new_password', message: problem }]);
    // A stolen session must not become a way around the login throttle.
    const keys = loginKeys(principal.email!, request.ip).slice(0, 2);
    const wait = await services.store.loginThrottle.blockedFor(keys, now);
    if (wait > 0) throw problems.tooManyAttempts(Math.ceil(wait / 1000), 'Too many wrong passwords for this user');
    const stored = await services.store.users.passwordHash(principal.id);
    if (stored === undefined || !(await verifyPassword(body.current_password, stored))) {
      await services.store.loginThrottle.recordFailure(keys, now);
      throw problems.forbidden('The current password is wrong');
    }
    if (body.new_password === body.current_password) throw problems.invalidRequest([{ path: 'new_password', message: 'must differ from the current password' }]);
    await services.store.users.setPassword(principal.id, await hashPassword(body.new_password), false, { actor: principal.actor, keepSession: principal.session!.idHash });
  },
});

export const setup = adminRoute({
  method: 'POST', url: '/setup', tag: 'session', operationId: 'setup',
  summary: 'Create the first instance owner with the one-time setup token a development start printed',
  description: 'Works only while no console user exists, once, with the token of the latest start, within 24 hours. Logs the new owner in.',
  access: { role: 'public' },
  body: z.object({ token: z.string().min(1).max(128), email: loginEmail, password }),
  example: { token: 'q3J0eXc9x8w1Uo6hRkq2d0m7b5vA4s1n3LpT8yZc2Fg', email: 'ops@example.com', password: 'correct horse battery staple' },
  success: { status: 201, description: 'The owner, logged in', schema: sessionInfo, example: { ...sessionExample, accounts: [] } },
  problems: { 404: 'No such setup token (used, replaced, expired, or a user exists)', 429: 'Too many failed attempts from this address (`Retry-After`)' },
  handler: async ({ body, request, reply, services, now }) => {
    const problem = passwordProblem(body.password, body.email);
    if (problem !== null) throw problems.invalidRequest([{ path: 'password', message: problem }]);
    // Guessing tokens counts against the address like failed logins do.
    const address = [{ key: addressKey(request.ip), rule: ADDRESS_RULE }];
    const wait = await services.store.loginThrottle.blockedFor(address, now);
    if (wait > 0) throw problems.tooManyAttempts(Math.ceil(wait / 1000), 'Too many failed attempts from this address');
    const owner = await useSetupToken(services.store, body.token, { email: body.email, hashPassword: () => hashPassword(body.password) }, now).catch(async (error: unknown) => {
      await services.store.loginThrottle.recordFailure(address, now);
      throw error;
    });
    const sessionId = newSessionId();
    await services.store.sessions.create(hashSessionId(sessionId), owner.id, now);
    setSessionCookie(request, reply, sessionId, services.sessions.maxAgeMs);
    const principal: Principal = {
      kind: 'user', id: owner.id, actor: `user:${owner.id}`, owner: true, email: owner.email, roles: new Map(), passwordChangeRequired: false,
      session: { idHash: hashSessionId(sessionId), csrfToken: csrfTokenOf(sessionId), createdAt: now, lastSeenAt: now },
    };
    return sessionAnswer(principal, services, principal.session!.csrfToken);
  },
});

export const sessionRoutes = [login, whoAmI, logout, changePassword, setup];
