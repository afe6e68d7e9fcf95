import { z } from 'zod';
import { problems } from '../../http/problem.js';
import type { AdminTokenInfo } from '../../store/admin-tokens.js';
import { adminRoute } from '../route.js';
import { accountId, accountParams, accountRole, iso, isoOrNull, time } from '../schemas.js';

/**
 * Admin tokens for automation (`Authorization: Bearer rat_…`): an account's admins make and revoke
 * tokens for their account (role `admin` or `analyst`); instance owners see every token and make
 * instance-wide `owner` tokens. The token is in the answer that makes it, once; only its SHA-256 is
 * kept. A revoked or expired token is refused by every replica from the next request.
 */
const tokenInfo = z.object({
  id: z.string().meta({ example: 'tok_9c41d07be2a3' }),
  name: z.string(),
  prefix: z.string().describe('The token\'s first characters, to recognise it'),
  account_id: accountId.nullable().describe('The account it acts on; null for an instance-wide owner token'),
  role: z.enum(['owner', 'admin', 'analyst']),
  created_at: time,
  created_by: z.string(),
  expires_at: time.nullable(),
  last_used_at: time.nullable().describe('To the minute'),
});

const infoOf = (t: AdminTokenInfo): z.output<typeof tokenInfo> => ({
  id: t.id, name: t.name, prefix: t.prefix, account_id: t.account_id, role: t.role, created_at: iso(t.created_at), created_by: t.created_by,
  expires_at: isoOrNull(t.expires_at), last_used_at: isoOrNull(t.last_used_at),
});

const example = {
  id: 'tok_9c41d07be2a3', name: 'ci rules deploy', prefix: 'rat_Q2x9Lk', account_id: 'acme', role: 'admin' as const,
  created_at: '2026-11-21T12:00:00.000Z', created_by: 'user:usr_4f1c2a9b7d3e8f60', expires_at: '2027-02-19T12:00:00.000Z', last_used_at: null,
};
const created = z.object({ token: z.string().describe('The token: shown this once, never again'), info: tokenInfo });
const createdExample = { token: 'rat_Q2x9LkV7mW0pZ3aB8cD1eF4gH6iJ9kL2mN5oP8qR1sT', info: example };
const list = z.object({ tokens: z.array(tokenInfo) });
const newToken = {
  name: z.string().trim().min(1).max(100),
  expires_in_days: z.number().int().min(1).max(3650).optional().describe('Omitted: the token does not expire'),
};
const expiry = (days: number | undefined, now: number) => (days === undefined ? null : now + days * 86_400_000);
const tokenParams = accountParams.extend({ token_id: z.string().regex(/^tok_[0-9a-f]{12}$/) });

export const listAccountTokens = adminRoute({
  method: 'GET', url: '/accounts/:account/tokens', tag: 'tokens', operationId: 'listAccountTokens',
  summary: 'The account\'s live admin tokens (never a token itself)',
  access: { role: 'admin', account: true },
  params: accountParams,
  success: { status: 200, description: 'Newest first', schema: list, example: { tokens: [example] } },
  handler: async ({ account, services }) => ({ tokens: (await services.store.adminTokens.list(account.id)).map(infoOf) }),
});

export const createAccountToken = adminRoute({
  method: 'POST', url: '/accounts/:account/tokens', tag: 'tokens', operationId: 'createAccountToken',
  summary: 'Make an admin token for the account; the token is in this answer only',
  access: { role: 'admin', account: true },
  // A leaked token must not be able to outlive its revocation by making another, or a user.
  accessOptions: { sessionOnly: true },
  params: accountParams,
  body: z.object({ ...newToken, role: accountRole }),
  example: { name: 'ci rules deploy', role: 'admin', expires_in_days: 90 },
  success: { status: 201, description: 'The token, once, and what is kept of it', schema: created, example: createdExample },
  handler: async ({ account, body, principal, services, now }) => {
    const made = await services.store.adminTokens.create({ name: body.name, account: account.id, role: body.role, expiresAt: expiry(body.expires_in_days, now) }, principal.actor);
    return { token: made.token, info: infoOf(made.info) };
  },
});

export const revokeAccountToken = adminRoute({
  method: 'DELETE', url: '/accounts/:account/tokens/:token_id', tag: 'tokens', operationId: 'revokeAccountToken',
  summary: 'Revoke one of the account\'s admin tokens: refused everywhere from the next request',
  access: { role: 'admin', account: true },
  params: tokenParams,
  success: { status: 200, description: 'The token as revoked', schema: tokenInfo, example },
  handler: async ({ account, params, principal, services }) => infoOf(await services.store.adminTokens.revoke(params.token_id, principal.actor, account.id)),
});

export const listTokens = adminRoute({
  method: 'GET', url: '/tokens', tag: 'tokens', operationId: 'listTokens',
  summary: 'Every live admin token of the instance',
  access: { role: 'owner' },
  success: { status: 200, description: 'Newest first', schema: list, example: { tokens: [example] } },
  handler: async ({ services }) => ({ tokens: (await services.store.adminTokens.list()).map(infoOf) }),
});

export const createToken = adminRoute({
  method: 'POST', url: '/tokens', tag: 'tokens', operationId: 'createToken',
  summary: 'Make an admin token: instance-wide (role owner), or for one account',
  access: { role: 'owner' },
  // A leaked token must not be able to outlive its revocation by making another, or a user.
  accessOptions: { sessionOnly: true },
  body: z.object({ ...newToken, role: z.enum(['owner', 'admin', 'analyst']), account: accountId.optional().describe('Required unless role is owner; not allowed with it') }),
  example: { name: 'nightly key rotation', role: 'owner', expires_in_days: 365 },
  success: { status: 201, description: 'The token, once, and what is kept of it', schema: created, example: { ...createdExample, info: { ...example, account_id: null, role: 'owner' } } },
  handler: async ({ body, principal, services, now }) => {
    if ((body.role === 'owner') !== (body.account === undefined)) {
      throw problems.invalidRequest([{ path: 'account', message: body.role === 'owner' ? 'an owner token acts on every account: leave account out' : 'required for an admin or analyst token' }]);
    }
    const made = await services.store.adminTokens.create({ name: body.name, account: body.account ?? null, role: body.role, expiresAt: expiry(body.expires_in_days, now) }, principal.actor);
    return { token: made.token, info: infoOf(made.info) };
  },
});

export const revokeToken = adminRoute({
  method: 'DELETE', url: '/tokens/:token_id', tag: 'tokens', operationId: 'revokeToken',
  summary: 'Revoke any admin token',
  access: { role: 'owner' },
  params: z.object({ token_id: tokenParams.shape.token_id }),
  success: { status: 200, description: 'The token as revoked', schema: tokenInfo, example },
  handler: async ({ params, principal, services }) => infoOf(await services.store.adminTokens.revoke(params.token_id, principal.actor)),
});

export const tokenRoutes = [listAccountTokens, createAccountToken, revokeAccountToken, listTokens, createToken, revokeToken];
