import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problem, problems } from '../http/problem.js';
import { hashAdminToken } from '../store/admin-tokens.js';
import type { Store } from '../store/index.js';
import type { Principal } from './access.js';
import { clearSessionCookie, csrfTokenOf, hashSessionId, sessionIdFrom } from './session.js';

/**
 * Turns a request's credentials into a Principal: `Authorization: Bearer <admin token>`, else the
 * session cookie, else nobody. Both are looked up in the store on every request, with the user's
 * or token's current state, so a revoked token, a disabled user, an ended session or a changed role
 * counts from the next request in every replica (the admin API is not a hot path: two or three
 * indexed reads). An API key is not an admin token and is never found here.
 */
export interface SessionPolicy {
  /** A session unused this long is ended. */
  idleTimeoutMs: number;
  /** A session this old is ended, used or not. */
  maxAgeMs: number;
  /** TWO_FACTOR_REQUIRED: a user without a confirmed authenticator may do nothing but set one up (an owner can also require it of one user). */
  twoFactorRequired: boolean;
  /** PASSWORD_LOGIN: when false, a one-time password is no reason to hold a (single sign-on) session back. */
  passwordLogin?: boolean;
}

/** Last-use times are written at most this often per session or token. */
export const TOUCH_EVERY_MS = 60_000;

/**
 * How often a session's last use is written: at most once a minute, and at least ten times per idle
 * timeout. The stored time lags the real last use by up to this, so a session used at least every
 * `idleTimeoutMs - sessionTouchEveryMs(policy)` never ends for idleness: with the smallest timeout
 * (60 s), a write every 6 s keeps a session used every 10 s (or every 50 s) alive. Writing once a
 * minute whatever the timeout once ended such a session 60 s after login.
 */
export const sessionTouchEveryMs = (policy: SessionPolicy) => Math.min(TOUCH_EVERY_MS, Math.floor(policy.idleTimeoutMs / 10));

export type Authentication = { principal: Principal } | { problem: Problem } | { anonymous: true };

const BEARER = /^bearer +(\S+) *$/i;

export async function authenticate(request: FastifyRequest, reply: FastifyReply, store: Store, policy: SessionPolicy, now: number): Promise<Authentication> {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) return { problem: problems.unauthenticated('Send "Authorization: Bearer <admin token>", or log in and use the session cookie') };
    return tokenPrincipal(store, token, now);
  }
  const sessionId = sessionIdFrom(request);
  if (sessionId === undefined) return { anonymous: true };
  const result = await sessionPrincipal(store, sessionId, policy, now);
  if ('problem' in result) clearSessionCookie(request, reply);
  return result;
}

async function tokenPrincipal(store: Store, token: string, now: number): Promise<Authentication> {
  const found = await store.adminTokens.find(hashAdminToken(token), now);
  if (!found) return { problem: problems.unauthenticated('The admin token is not valid: unknown, revoked or expired (an API key cannot call /admin)') };
  if (found.last_used_at === null || now - found.last_used_at >= TOUCH_EVERY_MS) await store.adminTokens.touch(found.id, now);
  return {
    principal: {
      kind: 'token', id: found.id, actor: `token:${found.id}`, owner: found.role === 'owner',
      roles: new Map(found.account_id !== null && found.role !== 'owner' ? [[found.account_id, found.role]] : []),
      passwordChangeRequired: false, tokenName: found.name,
    },
  };
}

async function sessionPrincipal(store: Store, sessionId: string, policy: SessionPolicy, now: number): Promise<Authentication> {
  const idHash = hashSessionId(sessionId);
  const session = await store.sessions.find(idHash);
  if (!session) return { problem: problems.unauthenticated('The session has ended; log in again') };
  const expired = now - session.created_at >= policy.maxAgeMs || now - session.last_seen_at >= policy.idleTimeoutMs;
  if (expired || session.user.status !== 'active') {
    await store.sessions.delete(idHash);
    return { problem: problems.unauthenticated(expired ? 'The session has expired; log in again' : 'The session has ended; log in again') };
  }
  const touch = now - session.last_seen_at >= sessionTouchEveryMs(policy);
  if (touch) await store.sessions.touch(idHash, now);
  const memberships = await store.users.memberships(session.user_id);
  const twoFactorSetupRequired = (policy.twoFactorRequired || session.user.two_factor_required === 1) && (await store.secondFactors.totp(session.user_id))?.confirmed_at == null;
  return {
    principal: {
      kind: 'user', id: session.user_id, actor: `user:${session.user_id}`, owner: session.user.owner === 1,
      roles: new Map(memberships.map((m) => [m.account_id, m.role])),
      passwordChangeRequired: session.user.password_change_required === 1 && policy.passwordLogin !== false,
      twoFactorSetupRequired,
      session: { idHash, csrfToken: csrfTokenOf(sessionId), createdAt: session.created_at, lastSeenAt: touch ? now : session.last_seen_at },
      email: session.user.email,
    },
  };
}
