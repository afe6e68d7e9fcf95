import { z } from 'zod';
import { problems } from '../../http/problem.js';
import type { UserInfo } from '../../store/users.js';
import { hashPassword, oneTimePassword } from '../password.js';
import { adminRoute, type AdminServices } from '../route.js';
import { accountId, accountParams, accountRole, iso, loginEmail, time } from '../schemas.js';

/**
 * Console users and their roles. Instance owners manage every user (create, disable, make owner,
 * reset a password); an account's admins manage its members: add one by e-mail address (a new user
 * gets a one-time password, shown once in the answer, to be changed at first login), change a
 * role, remove. An account admin sees only their account's members, and of each only the role in
 * that account, never which other accounts the person belongs to. (Adding an address tells them
 * whether a user with it exists on the instance, as any invitation does: nothing of another account.)
 */
const membership = z.object({ account_id: accountId, role: accountRole });
const user = z.object({
  id: z.string().meta({ example: 'usr_4f1c2a9b7d3e8f60' }),
  email: z.string(),
  owner: z.boolean(),
  status: z.enum(['active', 'disabled']),
  password_change_required: z.boolean(),
  two_factor_required: z.boolean().describe('An owner requires two-factor of this user (besides TWO_FACTOR_REQUIRED)'),
  created_at: time,
  created_by: z.string(),
  memberships: z.array(membership),
});
const userOf = (u: UserInfo): z.output<typeof user> => ({ ...u, created_at: iso(u.created_at) });
/**
 * A user as one account's admins see them: without `owner`, which would tell an account admin who
 * adds an existing address whether that person is an instance owner (none of the account's business).
 */
const member = user.omit({ owner: true });
const memberOf = (u: UserInfo): z.output<typeof member> => {
  const { owner: _owner, ...rest } = userOf(u);
  return rest;
};
const example = {
  id: 'usr_4f1c2a9b7d3e8f60', email: 'analyst@example.com', owner: false, status: 'active' as const, password_change_required: true, two_factor_required: false,
  created_at: '2026-11-21T12:00:00.000Z', created_by: 'user:usr_0a1b2c3d4e5f6a7b', memberships: [{ account_id: 'acme', role: 'analyst' as const }],
};
const oneTimePasswordField = z.string().nullable().describe('For a user made by this call: shown once, to be changed at first login. Null when the user already existed.');
const withPassword = z.object({ user, one_time_password: oneTimePasswordField });
const memberWithPassword = z.object({ user: member, one_time_password: oneTimePasswordField });
const { owner: _exampleOwner, ...memberExample } = example;
const userParams = z.object({ user_id: z.string().regex(/^usr_[0-9a-f]{16}$/) });
const memberParams = accountParams.extend(userParams.shape);

/** A new user with a one-time password; resolves with both. */
async function newUser(services: AdminServices, email: string, fields: { owner: boolean; membership?: { account: string; role: 'admin' | 'analyst' } }, actor: string) {
  const password = oneTimePassword();
  const created = await services.store.users.create({ email, passwordHash: await hashPassword(password), owner: fields.owner, passwordChangeRequired: true, membership: fields.membership }, actor);
  return { user: created, one_time_password: password };
}

/** In the owners' list: whether the user has an authenticator (an owner can reset it: DELETE /users/{id}/totp). */
const listedUser = user.extend({ two_factor: z.boolean().describe('A TOTP authenticator is confirmed') });

export const listUsers = adminRoute({
  method: 'GET', url: '/users', tag: 'users', operationId: 'listUsers',
  summary: 'Every console user, with their memberships and whether two-factor is on',
  access: { role: 'owner' },
  success: { status: 200, description: 'By e-mail address', schema: z.object({ users: z.array(listedUser) }), example: { users: [{ ...example, two_factor: false }] } },
  handler: async ({ services }) => {
    const [users, withTotp] = await Promise.all([services.store.users.list(), services.store.secondFactors.confirmedUsers()]);
    return { users: users.map((u) => ({ ...userOf(u), two_factor: withTotp.has(u.id) })) };
  },
});

export const createUser = adminRoute({
  method: 'POST', url: '/users', tag: 'users', operationId: 'createUser',
  summary: 'Make a console user with a one-time password',
  access: { role: 'owner' },
  // A leaked token must not be able to outlive its revocation by making another, or a user.
  accessOptions: { sessionOnly: true },
  body: z.object({ email: loginEmail, owner: z.boolean().default(false), account: accountId.optional(), role: accountRole.optional() }),
  example: { email: 'analyst@example.com', account: 'acme', role: 'analyst' },
  success: { status: 201, description: 'The user, and their one-time password (once)', schema: withPassword, example: { user: example, one_time_password: 'Vh3kq9ZtYb2mL0xWcR4a' } },
  problems: { 409: 'A user with this e-mail address exists' },
  handler: async ({ body, principal, services }) => {
    if ((body.account === undefined) !== (body.role === undefined)) throw problems.invalidRequest([{ path: body.account === undefined ? 'account' : 'role', message: 'account and role go together' }]);
    const made = await newUser(services, body.email, { owner: body.owner, membership: body.account ? { account: body.account, role: body.role! } : undefined }, principal.actor);
    return { user: userOf(made.user), one_time_password: made.one_time_password };
  },
});

export const updateUser = adminRoute({
  method: 'PATCH', url: '/users/:user_id', tag: 'users', operationId: 'updateUser',
  summary: 'Disable or re-enable a user, make them owner or not, or require two-factor of them',
  description: 'Disabling ends the user\'s sessions at once, in every replica. The instance keeps at least one active owner. With `two_factor_required`, a user without a confirmed authenticator may do nothing but set one up (from their next request), as with TWO_FACTOR_REQUIRED for everyone. Audited (`user.update`).',
  access: { role: 'owner' },
  // A leaked token must not be able to outlive its revocation by making another, or a user.
  accessOptions: { sessionOnly: true },
  params: userParams,
  body: z.object({ status: z.enum(['active', 'disabled']).optional(), owner: z.boolean().optional(), two_factor_required: z.boolean().optional() }),
  example: { status: 'disabled' },
  success: { status: 200, description: 'The user as they are now', schema: user, example: { ...example, status: 'disabled' } },
  problems: { 409: 'This would leave no active owner' },
  handler: async ({ params, body, principal, services }) => userOf(await services.store.users.update(params.user_id, body, principal.actor)),
});

export const resetPassword = adminRoute({
  method: 'POST', url: '/users/:user_id/password-reset', tag: 'users', operationId: 'resetPassword',
  summary: 'Give a user a new one-time password; ends their sessions',
  access: { role: 'owner' },
  // A leaked token must not be able to outlive its revocation by making another, or a user.
  accessOptions: { sessionOnly: true },
  params: userParams,
  success: { status: 200, description: 'The one-time password, once', schema: z.object({ one_time_password: z.string() }), example: { one_time_password: 'Vh3kq9ZtYb2mL0xWcR4a' } },
  handler: async ({ params, principal, services }) => {
    const password = oneTimePassword();
    await services.store.users.setPassword(params.user_id, await hashPassword(password), true, { actor: principal.actor });
    return { one_time_password: password };
  },
});

export const listMembers = adminRoute({
  method: 'GET', url: '/accounts/:account/members', tag: 'users', operationId: 'listMembers',
  summary: 'The account\'s members and their roles in it',
  access: { role: 'admin', account: true },
  params: accountParams,
  success: { status: 200, description: 'By e-mail address', schema: z.object({ users: z.array(member) }), example: { users: [memberExample] } },
  handler: async ({ account, services }) => ({ users: (await services.store.users.list(account.id)).map(memberOf) }),
});

export const addMember = adminRoute({
  method: 'POST', url: '/accounts/:account/members', tag: 'users', operationId: 'addMember',
  summary: 'Add a member by e-mail address (a new user gets a one-time password), or change their role',
  access: { role: 'admin', account: true },
  // A leaked token must not be able to outlive its revocation by making another, or a user.
  accessOptions: { sessionOnly: true },
  params: accountParams,
  body: z.object({ email: loginEmail, role: accountRole }),
  example: { email: 'analyst@example.com', role: 'analyst' },
  success: { status: 201, description: 'The member, and their one-time password if the user is new', schema: memberWithPassword, example: { user: memberExample, one_time_password: 'Vh3kq9ZtYb2mL0xWcR4a' } },
  handler: async ({ account, body, principal, services }) => {
    const existing = await services.store.users.byEmail(body.email);
    if (existing === undefined) {
      const made = await newUser(services, body.email, { owner: false, membership: { account: account.id, role: body.role } }, principal.actor);
      return { user: memberOf(made.user), one_time_password: made.one_time_password };
    }
    await services.store.users.setMembership(account.id, existing.id, body.role, principal.actor);
    return { user: memberOf((await services.store.users.list(account.id)).find((u) => u.id === existing.id)!), one_time_password: null };
  },
});

/** The member, as the account sees them; a user who is not a member is a 404 like one who does not exist. */
async function memberIn(services: AdminServices, account: string, userId: string) {
  const found = (await services.store.users.list(account)).find((u) => u.id === userId);
  if (!found) throw problems.resourceNotFound(`no member ${userId} in account "${account}"`);
  return found;
}

export const setMemberRole = adminRoute({
  method: 'PUT', url: '/accounts/:account/members/:user_id', tag: 'users', operationId: 'setMemberRole',
  summary: 'Change a member\'s role in the account',
  access: { role: 'admin', account: true },
  // A leaked token must not be able to outlive its revocation by making another, or a user.
  accessOptions: { sessionOnly: true },
  params: memberParams,
  body: z.object({ role: accountRole }),
  example: { role: 'admin' },
  success: { status: 200, description: 'The member as they are now', schema: member, example: { ...memberExample, memberships: [{ account_id: 'acme', role: 'admin' as const }] } },
  handler: async ({ account, params, body, principal, services }) => {
    await memberIn(services, account.id, params.user_id);
    await services.store.users.setMembership(account.id, params.user_id, body.role, principal.actor);
    return memberOf(await memberIn(services, account.id, params.user_id));
  },
});

export const removeMember = adminRoute({
  method: 'DELETE', url: '/accounts/:account/members/:user_id', tag: 'users', operationId: 'removeMember',
  summary: 'Remove a member from the account (the user stays, with their other accounts)',
  access: { role: 'admin', account: true },
  params: memberParams,
  success: { status: 204, description: 'Removed' },
  handler: async ({ account, params, principal, services }) => {
    await memberIn(services, account.id, params.user_id);
    await services.store.users.removeMembership(account.id, params.user_id, principal.actor);
  },
});

export const userRoutes = [listUsers, createUser, updateUser, resetPassword, listMembers, addMember, setMemberRole, removeMember];
