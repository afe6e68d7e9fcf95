import { z } from 'zod';
import { canSee, roleIn } from '../access.js';
import { adminRoute } from '../route.js';
import { accountId, accountParams, accountRole, accountStatus, iso, time } from '../schemas.js';
import type { AccountRow } from '../../store/schema.js';

/** Accounts (PRODUCT.md "Keys and accounts"): owners create and disable them; members see their own. */
const account = z.object({
  id: accountId,
  name: z.string(),
  status: accountStatus,
  created_at: time,
  role: accountRole.describe('The caller\'s role in the account (`admin` for an instance owner)'),
});

const accountOf = (row: AccountRow, role: 'admin' | 'analyst') => ({ id: row.id, name: row.name, status: row.status, created_at: iso(row.created_at), role });

const example = { id: 'acme', name: 'Acme Ltd', status: 'active' as const, created_at: '2026-11-21T12:00:00.000Z', role: 'admin' as const };
const name = z.string().trim().min(1).max(200);

export const listAccounts = adminRoute({
  method: 'GET', url: '/accounts', tag: 'accounts', operationId: 'listAccounts',
  summary: 'The accounts the caller belongs to (every account, for an instance owner)',
  access: { role: 'signed-in' },
  success: { status: 200, description: 'Accounts, by id', schema: z.object({ accounts: z.array(account) }), example: { accounts: [example] } },
  handler: async ({ principal, services }) => {
    const rows = await services.store.accounts.rows();
    return { accounts: rows.filter((row) => canSee(principal, row.id)).map((row) => accountOf(row, roleIn(principal, row.id)!)) };
  },
});

export const createAccount = adminRoute({
  method: 'POST', url: '/accounts', tag: 'accounts', operationId: 'createAccount',
  summary: 'Create an account, with the rule sets of RULES_DIR',
  description: 'The account has no key yet: create one with `POST /admin/v1/accounts/{account}/keys`.',
  access: { role: 'owner' },
  body: z.object({ id: accountId, name: name.optional().describe('Defaults to the id') }),
  example: { id: 'acme', name: 'Acme Ltd' },
  success: { status: 201, description: 'The new account', schema: account, example },
  problems: { 409: 'An account with this id exists' },
  handler: async ({ body, principal, services }) => {
    const created = await services.store.accounts.create(body.id, body.name ?? body.id, services.seed, principal.actor);
    await services.reloadConfiguration();
    return accountOf(created, 'admin');
  },
});

export const getAccount = adminRoute({
  method: 'GET', url: '/accounts/:account', tag: 'accounts', operationId: 'getAccount',
  summary: 'One account',
  access: { role: 'analyst', account: true },
  params: accountParams,
  success: { status: 200, description: 'The account', schema: account, example },
  handler: async ({ account: row, principal }) => accountOf(row, roleIn(principal, row.id)!),
});

export const renameAccount = adminRoute({
  method: 'PATCH', url: '/accounts/:account', tag: 'accounts', operationId: 'renameAccount',
  summary: 'Rename an account',
  access: { role: 'admin', account: true },
  params: accountParams,
  body: z.object({ name }),
  example: { name: 'Acme Ltd' },
  success: { status: 200, description: 'The account as it is now', schema: account, example },
  handler: async ({ account: row, body, principal, services }) => {
    const updated = await services.store.accounts.update(row.id, { name: body.name }, principal.actor);
    return accountOf(updated, roleIn(principal, row.id)!);
  },
});

export const setAccountStatus = adminRoute({
  method: 'PUT', url: '/accounts/:account/status', tag: 'accounts', operationId: 'setAccountStatus',
  summary: 'Disable or re-enable an account',
  description: 'A disabled account\'s API keys are refused by every replica within RELOAD_INTERVAL_MS, and its rule sets stop serving; its data, members and admin tokens stay. Re-enabling brings the keys back.',
  access: { role: 'owner' },
  params: accountParams,
  body: z.object({ status: accountStatus }),
  example: { status: 'disabled' },
  success: { status: 200, description: 'The account as it is now', schema: account, example: { ...example, status: 'disabled' } },
  handler: async ({ params, body, principal, services }) => {
    const updated = await services.store.accounts.update(params.account, { status: body.status }, principal.actor);
    await services.reloadConfiguration();
    return accountOf(updated, 'admin');
  },
});

export const accountRoutes = [listAccounts, createAccount, getAccount, renameAccount, setAccountStatus];
