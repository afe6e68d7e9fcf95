import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's session: a random id in a cookie, only its SHA-256 kept in the store.
 *
 * The cookie is `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page makes the
 * browser send it), `Path=/admin/v1` (nothing else on the origin receives it), and `Secure` when
 * the request came over TLS (`X-Forwarded-Proto` counts only from a `TRUST_PROXY` address: Fastify's
 * `request.protocol`). `Max-Age` is the absolute lifetime; idle expiry is enforced by the server.
 *
 * CSRF: every write authenticated by the cookie must also send `X-CSRF-Token`, the session's token
 * (a synchronizer token, OWASP's first recommendation). SameSite=Strict already stops cross-site
 * requests in current browsers; the token also stops a same-site attacker (a sibling subdomain,
 * which SameSite treats as the same site) and browsers without SameSite. A custom header cannot
 * be sent cross-origin without a CORS preflight, which this service never grants. The token is
 * HMAC-SHA-256 of a fixed label keyed with the session id: nothing more to store, different for
 * every session, useless without the cookie, and not derivable from the stored hash. It is
 * compared in constant time. Logging in needs none: there is no session yet, and a cross-site page
 * cannot send the JSON body the route requires without a preflight.
 */
export const SESSION_COOKIE = 'risk_session';
export const CSRF_HEADER = 'x-csrf-token';
const COOKIE_PATH = '/admin/v1';
/** 256 bits, base64url: 43 characters. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export const newSessionId = () => randomBytes(32).toString('base64url');
export const hashSessionId = (id: string) => `sha256:${hash('sha256', id, 'hex')}`;
export const csrfTokenOf = (sessionId: string) => createHmac('sha256', sessionId).update('risk-evaluation csrf v1').digest('base64url');

export const isWrite = (method: string) => method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';

export function csrfMatches(request: FastifyRequest, expected: string): boolean {
  const sent = request.headers[CSRF_HEADER];
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The session id from the Cookie header, when it has one of the right shape. */
export function sessionIdFrom(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (SESSION_ID.test(value)) return value;
  }
  return undefined;
}

function cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, id: string, maxAgeMs: number): void {
  // Replaces the clearing of a stale cookie the same request may have set.
  reply.removeHeader('set-cookie');
  reply.header('set-cookie', cookie(request, id, Math.floor(maxAgeMs / 1000)));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookie(request, '', 0));
}
