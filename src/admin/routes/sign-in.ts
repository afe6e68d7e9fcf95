import { z } from 'zod';
import { problems } from '../../http/problem.js';
import { clearFlowCookie, SignInRefused, type SingleSignOn } from '../oidc.js';
import { adminRoute, type AdminServices } from '../route.js';
import { hashSessionId, newSessionId, setSessionCookie } from '../session.js';

/**
 * How console users sign in (README "Single sign-on"): what the login page offers, and the two legs
 * of an OpenID Connect sign-in. Both legs are browser navigations, not API calls: they answer 303.
 *
 * Who may sign in through the provider: a console user an owner made (or an account admin added),
 * whose e-mail address is the one the provider vouches for (OIDC_EMAIL_CLAIM, not marked
 * unverified). Nobody is made by signing in: someone the provider knows but no owner added is sent
 * back to the login page with `unknown_user`, and the refusal is audited. Accounts and roles are
 * the user's memberships, given in the console as for any user. The session is the same as a
 * password's (cookie, CSRF token, idle and absolute expiry), and its creation is audited
 * (`user.sso_login`, with the provider's subject).
 */
export const CONSOLE_PATH = '/console/';

const signInOptions = z.object({
  password: z.boolean().describe('E-mail address and password are accepted (PASSWORD_LOGIN)'),
  single_sign_on: z.object({
    name: z.string().describe('The provider, as the button names it: "Sign in with …" (OIDC_NAME)'),
    url: z.string().describe('Where the browser goes to start: a navigation, not a fetch'),
  }).nullable(),
});

export const getSignInOptions = adminRoute({
  method: 'GET', url: '/sign-in', tag: 'session', operationId: 'getSignInOptions',
  summary: 'How console users may sign in here: password, single sign-on, or both',
  access: { role: 'public' },
  success: { status: 200, description: 'The ways to sign in', schema: signInOptions, example: { password: true, single_sign_on: { name: 'Acme SSO', url: '/admin/v1/oidc/login' } } },
  handler: async ({ services }) => ({
    password: services.config.signIn.passwords,
    single_sign_on: services.singleSignOn ? { name: services.singleSignOn.name, url: '/admin/v1/oidc/login' } : null,
  }),
});

function provider(services: AdminServices): SingleSignOn {
  if (!services.singleSignOn) throw problems.resourceNotFound('single sign-on is not configured here (OIDC_ISSUER)');
  return services.singleSignOn;
}

/** A 303's handler resolves with the Location (route.ts). */
const location = z.string();

const refusedAt = (reason: string) => `${CONSOLE_PATH}?sign_in_error=${reason}`;

export const startSingleSignOn = adminRoute({
  method: 'GET', url: '/oidc/login', tag: 'session', operationId: 'startSingleSignOn',
  summary: 'Start signing in with the OpenID Connect provider: redirects the browser to it',
  description: 'Sets the `risk_oidc` cookie (state, nonce and PKCE verifier of this sign-in, ten minutes). When the provider cannot be reached, redirects to the console with `?sign_in_error=provider_unavailable`.',
  access: { role: 'public' },
  success: { status: 303, description: 'To the provider\'s authorization endpoint', schema: location },
  problems: { 404: 'Single sign-on is not configured' },
  handler: async ({ request, reply, services, now }) => {
    const sso = provider(services);
    try {
      return await sso.start(request, reply, now);
    } catch (error) {
      if (!(error instanceof SignInRefused)) throw error;
      request.log.warn({ reason: error.reason, detail: error.detail }, 'single sign-on refused');
      return refusedAt(error.reason);
    }
  },
});

export const finishSingleSignOn = adminRoute({
  method: 'GET', url: '/oidc/callback', tag: 'session', operationId: 'finishSingleSignOn',
  summary: 'Where the provider sends the browser back: signs the user in and redirects to the console',
  description: 'On success sets the session cookie and redirects to `/console/`. Otherwise redirects to `/console/?sign_in_error=<reason>`, one of `sign_in_expired`, `provider_refused` (also a code used twice), `invalid_token` (issuer, audience, signature, expiry or nonce wrong), `email_missing`, `unknown_user` (no active console user has the address), `provider_unavailable`; the reason and the provider\'s subject are audited (`user.sso_refused`).',
  access: { role: 'public' },
  success: { status: 303, description: 'To the console, signed in or with the reason it refused', schema: location },
  problems: { 404: 'Single sign-on is not configured' },
  handler: async ({ request, reply, services, now }) => {
    const sso = provider(services);
    const issuer = sso.settings.issuer.href;
    try {
      const identity = await sso.finish(request, now);
      const user = await services.store.users.byEmail(identity.email);
      if (!user || user.status !== 'active') throw new SignInRefused('unknown_user', user ? 'the console user with this address is disabled' : 'no console user has the address the provider vouches for', identity.subject);
      const sessionId = newSessionId();
      await services.store.sessions.create(hashSessionId(sessionId), user.id, now, {
        actor: `user:${user.id}`, account_id: null, action: 'user.sso_login', target: user.id, before: null, after: { issuer, subject: identity.subject },
      });
      setSessionCookie(request, reply, sessionId, services.sessions.maxAgeMs);
      clearFlowCookie(request, reply);
      return CONSOLE_PATH;
    } catch (error) {
      clearFlowCookie(request, reply);
      if (!(error instanceof SignInRefused)) throw error;
      // The detail names no e-mail address: the log and the audit keep the reason and the provider's subject.
      request.log.warn({ reason: error.reason, detail: error.detail, subject: error.subject }, 'single sign-on refused');
      await services.store.sessions.auditRefusal(now, {
        actor: 'sso', account_id: null, action: 'user.sso_refused', target: null, before: null, after: { issuer, reason: error.reason, subject: error.subject ?? null },
      });
      return refusedAt(error.reason);
    }
  },
});

export const signInRoutes = [getSignInOptions, startSingleSignOn, finishSingleSignOn];
