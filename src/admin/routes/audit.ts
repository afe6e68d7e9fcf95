import { z } from 'zod';
import type { AuditRecord } from '../../store/audit.js';
import { adminRoute } from '../route.js';
import { accountId, accountParams, iso, time } from '../schemas.js';

/**
 * The audit log (every change made through the API, the CLI or at start: who, when, what, before
 * and after; never a secret), newest first, a page at a time: `before` is the `id` of the last entry
 * seen (`next_before` of the previous page). An account's admins read their account's entries;
 * instance owners read everything, or one account's.
 */
const entry = z.object({
  id: z.number().int(),
  at: time,
  actor: z.string().describe('`user:<id>`, `token:<id>`, `cli:<os user>`, `system`, `setup`'),
  account_id: accountId.nullable(),
  action: z.string().meta({ example: 'key.create' }),
  target: z.string().nullable(),
  before: z.unknown(),
  after: z.unknown(),
});
const page = z.object({ entries: z.array(entry), next_before: z.number().int().nullable().describe('Pass as `before` for the next page; null on the last') });
const query = z.object({
  before: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
const example = {
  entries: [{
    id: 42, at: '2026-11-21T12:00:00.000Z', actor: 'user:usr_4f1c2a9b7d3e8f60', account_id: 'acme', action: 'key.create', target: 'key_3f2a9c0d1b4e',
    before: null, after: { id: 'key_3f2a9c0d1b4e', account_id: 'acme', prefix: 'rk_Ab3dE9', created_at: 1795262400000, created_by: 'user:usr_4f1c2a9b7d3e8f60', last_used_at: null, revoked_at: null },
  }],
  next_before: null,
};

const pageOf = (rows: AuditRecord[], limit: number) => ({
  entries: rows.map((r) => ({ id: r.id, at: iso(r.at), actor: r.actor, account_id: r.account_id, action: r.action, target: r.target, before: r.before, after: r.after })),
  next_before: rows.length === limit ? rows.at(-1)!.id : null,
});

export const accountAudit = adminRoute({
  method: 'GET', url: '/accounts/:account/audit', tag: 'audit', operationId: 'listAccountAudit',
  summary: 'The account\'s audit log, newest first',
  access: { role: 'admin', account: true },
  params: accountParams,
  query,
  success: { status: 200, description: 'One page', schema: page, example },
  handler: async ({ account, query: q, services }) => pageOf(await services.store.audit({ account: account.id, beforeId: q.before, limit: q.limit }), q.limit),
});

export const instanceAudit = adminRoute({
  method: 'GET', url: '/audit', tag: 'audit', operationId: 'listAudit',
  summary: 'The whole instance\'s audit log (or one account\'s), newest first',
  access: { role: 'owner' },
  query: query.extend({ account: accountId.optional() }),
  success: { status: 200, description: 'One page', schema: page, example },
  handler: async ({ query: q, services }) => pageOf(await services.store.audit({ account: q.account, beforeId: q.before, limit: q.limit }), q.limit),
});

export const auditRoutes = [accountAudit, instanceAudit];
