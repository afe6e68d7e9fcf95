import type { FastifyRequest } from 'fastify';
import { problems } from '../http/problem.js';
import type { AccountRole } from '../store/schema.js';
import { csrfMatches, isWrite } from './session.js';

/**
 * Who is calling `/admin/v1`, and what each route allows: the one place authorization is decided
 * (PRODUCT.md "Admin API and console"). Every route declares its `Access`; `authorize` runs for it
 * before its body is read, so a handler never checks a role itself.
 *
 * - `owner`: instance owners (users marked owner, `owner` tokens). They manage accounts and users,
 *   and act as `admin` in every account.
 * - `admin` / `analyst` with `account: true`: a role in the account the route's `:account` names.
 *   `admin` may do everything in the account; `analyst` reads, and works on decisions, labels and
 *   lists. An `admin` route satisfies nobody with `analyst`; an `analyst` route satisfies both.
 * - `signed-in`: anyone authenticated (who am I, the accounts I belong to).
 * - `public`: no credentials (log in, the first owner's setup).
 *
 * A caller who is not a member of the account a route names gets the same 404 as for an account
 * that does not exist: membership elsewhere never reveals that an account exists.
 */
export type Access =
  | { role: 'owner' }
  | { role: AccountRole; account: true }
  | { role: 'signed-in' }
  | { role: 'public' };

export interface AccessOptions {
  /** Allowed while the user's password must still be changed, or two-factor set up (who am I, change it, set it up, log out). */
  duringPasswordChange?: boolean;
  /** Only with a console session: changing one's password (a token has none), and making tokens or users (a leaked token must not outlive its revocation by making another, or a user). */
  sessionOnly?: boolean;
}

export interface Principal {
  kind: 'user' | 'token' | 'anonymous';
  /** `usr_…`, `tok_…`, or `anonymous`. */
  id: string;
  /** How the audit log names them: `user:usr_…`, `token:tok_…`. */
  actor: string;
  owner: boolean;
  /** Roles per account (an owner's own memberships only; `roleIn` adds what owning gives). */
  roles: ReadonlyMap<string, AccountRole>;
  passwordChangeRequired: boolean;
  /** TWO_FACTOR_REQUIRED is on and the user has no confirmed authenticator yet. */
  twoFactorSetupRequired?: boolean;
  /** Set when authenticated by the session cookie: writes must then carry its CSRF token. */
  session?: { idHash: string; csrfToken: string; createdAt: number; lastSeenAt: number };
  /** Set for a user: their e-mail address, for the session route. */
  email?: string;
  /** Set for a token: its name, for the session route. */
  tokenName?: string;
}

export const ANONYMOUS: Principal = { kind: 'anonymous', id: 'anonymous', actor: 'anonymous', owner: false, roles: new Map(), passwordChangeRequired: false };

const RANK: Record<AccountRole, number> = { analyst: 1, admin: 2 };

/** The caller's role in an account: what owning the instance gives, or their membership; undefined when they are no member. */
export function roleIn(principal: Principal, account: string): AccountRole | undefined {
  return principal.owner ? 'admin' : principal.roles.get(account);
}

/** Whether the caller may know the account exists. */
export const canSee = (principal: Principal, account: string) => roleIn(principal, account) !== undefined;

/** Whether `role` is at least `needed`. */
export const atLeast = (role: AccountRole, needed: AccountRole) => RANK[role] >= RANK[needed];

/** The 404 for an account the caller may not see, word for word the one for an account that does not exist. */
export const noSuchAccount = (account: string) => problems.resourceNotFound(`no account "${account}"`);

/**
 * Throws the problem that answers a caller the route does not allow. Existence of the account is
 * checked after (by the caller of this function) and answers the same 404 as non-membership.
 */
export function authorize(access: Access, options: AccessOptions, principal: Principal, request: FastifyRequest, account: string | undefined): void {
  if (access.role === 'public') return;
  if (principal.kind === 'anonymous') throw problems.unauthenticated('Log in (POST /admin/v1/session) or send "Authorization: Bearer <admin token>"');
  if (principal.session && isWrite(request.method)) {
    // Checked before roles, so a forged request learns nothing about what the victim may do.
    if (!csrfMatches(request, principal.session.csrfToken)) throw problems.csrfFailed();
  }
  if (principal.passwordChangeRequired && !options.duringPasswordChange) throw problems.passwordChangeRequired();
  if (principal.twoFactorSetupRequired && !options.duringPasswordChange) throw problems.twoFactorSetupRequired();
  if (options.sessionOnly && !principal.session) throw problems.forbidden('Only a console session can do this; an admin token cannot');
  switch (access.role) {
    case 'signed-in':
      return;
    case 'owner':
      if (!principal.owner) throw problems.forbidden('Only an instance owner can do this');
      return;
    default: {
      const role = roleIn(principal, account!);
      if (role === undefined) throw noSuchAccount(account!);
      if (!atLeast(role, access.role)) throw problems.forbidden(`This needs the ${access.role} role in account "${account}"; yours is ${role}`);
    }
  }
}
