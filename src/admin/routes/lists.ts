import { z } from 'zod';
import { problems } from '../../http/problem.js';
import { LIST_KINDS, LIST_NAMES } from '../../lists/facts.js';
import { StoreRequestError } from '../../store/errors.js';
import { MAX_LIST_ENTRIES, MAX_REASON_LENGTH, type ListEntry } from '../../store/lists.js';
import { adminRoute } from '../route.js';
import { accountParams, iso, isoOrNull, time } from '../schemas.js';

/**
 * An account's block and allow lists (PRODUCT.md "Lists"), through the port `npm run lists` uses
 * (src/store/lists.ts): the same normalisation and validation, audited in the change's transaction.
 * Analysts and admins manage them. A change is served by this replica at once and by every other
 * within RELOAD_INTERVAL_MS.
 */
const entry = z.object({
  id: z.number().int(),
  list: z.enum(LIST_NAMES),
  kind: z.enum(LIST_KINDS),
  value: z.string().describe('Normalised: e-mail and domain lower case in A-labels, an IP or CIDR in canonical text'),
  reason: z.string(),
  author: z.string(),
  created_at: time,
  expires_at: time.nullable(),
});
const entryOf = (e: ListEntry): z.output<typeof entry> => ({
  id: e.id, list: e.list, kind: e.kind, value: e.value, reason: e.reason, author: e.author, created_at: iso(Number(e.created_at)), expires_at: isoOrNull(e.expires_at === null ? null : Number(e.expires_at)),
});
const example = {
  id: 12, list: 'block' as const, kind: 'ip' as const, value: '203.0.113.0/24', reason: 'Card testing from this range since 21 November',
  author: 'user:usr_4f1c2a9b7d3e8f60', created_at: '2026-11-21T12:00:00.000Z', expires_at: '2026-12-21T12:00:00.000Z',
};

const newEntry = z.strictObject({
  list: z.enum(LIST_NAMES),
  kind: z.enum(LIST_KINDS).describe('`ip` takes an address or a CIDR range; `domain` lists its subdomains too'),
  value: z.string().max(320),
  reason: z.string().max(MAX_REASON_LENGTH * 2).describe(`Why, for whoever reads the list next (1 to ${MAX_REASON_LENGTH} characters once trimmed)`),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional().describe('When it stops applying; absent or null: until removed'),
});

/** The store's validation message names the field first (`value: …`): as a problem naming that field. */
function invalidField(error: unknown): never {
  if (error instanceof StoreRequestError && error.code === 'invalid') {
    const field = /^(list|kind|value|reason|expires_at)\b:?\s*/.exec(error.message);
    throw problems.invalidRequest([{ path: field?.[1] ?? '(body)', message: field ? error.message.slice(field[0].length) || error.message : error.message }]);
  }
  throw error;
}

export const listEntries = adminRoute({
  method: 'GET', url: '/accounts/:account/lists', tag: 'lists', operationId: 'listListEntries',
  summary: 'The account\'s list entries, newest first',
  access: { role: 'analyst', account: true },
  params: accountParams,
  query: z.object({
    list: z.enum(LIST_NAMES).optional(),
    kind: z.enum(LIST_KINDS).optional(),
    include_expired: z.enum(['true', 'false']).default('false').describe('Expired entries are kept until pruned'),
    before: z.coerce.number().int().min(1).optional().describe('`next_before` of the previous page'),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
  }),
  success: {
    status: 200, description: 'One page',
    schema: z.object({ entries: z.array(entry), next_before: z.number().int().nullable().describe('Pass as `before` for the next page; null on the last') }),
    example: { entries: [example], next_before: null },
  },
  handler: async ({ account, query: q, services }) => {
    const rows = await services.store.lists.list(account.id, { list: q.list, kind: q.kind, includeExpired: q.include_expired === 'true', beforeId: q.before, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    return { entries: page.map(entryOf), next_before: rows.length > q.limit ? page.at(-1)!.id : null };
  },
});

export const addListEntry = adminRoute({
  method: 'POST', url: '/accounts/:account/lists', tag: 'lists', operationId: 'addListEntry',
  summary: 'Add an entry to the block or allow list',
  description: `Validated as \`npm run lists -- add\` validates it. At most ${MAX_LIST_ENTRIES} entries per account.`,
  access: { role: 'analyst', account: true },
  params: accountParams,
  body: newEntry,
  example: { list: 'block', kind: 'ip', value: '203.0.113.0/24', reason: 'Card testing from this range since 21 November', expires_at: '2026-12-21T12:00:00Z' },
  success: { status: 201, description: 'The entry as stored (normalised)', schema: entry, example },
  problems: { 409: `The entry is already on that list, or the account has ${MAX_LIST_ENTRIES} entries` },
  handler: async ({ account, body, principal, services }) => {
    const expires = body.expires_at === undefined || body.expires_at === null ? null : Date.parse(body.expires_at);
    const added = await services.store.lists.add(account.id, { list: body.list, kind: body.kind, value: body.value, reason: body.reason, expires_at: expires }, { actor: principal.actor })
      .catch(invalidField);
    await services.reloadConfiguration();
    return entryOf(added);
  },
});

export const removeListEntry = adminRoute({
  method: 'DELETE', url: '/accounts/:account/lists/:entry_id', tag: 'lists', operationId: 'removeListEntry',
  summary: 'Remove a list entry',
  access: { role: 'analyst', account: true },
  params: accountParams.extend({ entry_id: z.coerce.number().int().min(1) }),
  success: { status: 200, description: 'The entry as it was', schema: entry, example },
  handler: async ({ account, params, principal, services }) => {
    const removed = await services.store.lists.remove(account.id, params.entry_id, { actor: principal.actor });
    await services.reloadConfiguration();
    return entryOf(removed);
  },
});

export const listRoutes = [listEntries, addListEntry, removeListEntry];
