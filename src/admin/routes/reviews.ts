import { z } from 'zod';
import { problems } from '../../http/problem.js';
import { LIST_KINDS, LIST_NAMES } from '../../lists/facts.js';
import { StoreRequestError } from '../../store/errors.js';
import type { Store } from '../../store/index.js';
import { EVENT_TYPE } from '../../store/rule-sets.js';
import { MAX_RESOLUTION_ENTRIES, MAX_REVIEW_PAGE, MAX_REVIEW_REASON, REVIEW_RESOLUTIONS, REVIEW_STATUSES, type ReviewItem } from '../../store/reviews.js';
import { adminRoute } from '../route.js';
import { accountParams, iso, isoOrNull, time } from '../schemas.js';

/**
 * The review queue (issue 27, PRODUCT.md "Review"): the items of evaluations answered `review`,
 * oldest first, claimed, released and resolved by analysts in the console, or resolved by the
 * caller's backend with an admin token. Two people never resolve one item: the second is answered
 * 409 naming who resolved it. Through src/store/reviews.ts, audited there.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const itemParams = accountParams.extend({
  id: z.string().transform((id) => id.toLowerCase()).pipe(z.string().regex(UUID, 'must be an evaluation id')).meta({ example: '019a4f6e-8c1b-7d2e-9f3a-1b2c3d4e5f60' }),
});

const item = z.object({
  evaluation_id: z.string(),
  event_type: z.string(),
  user_id: z.string().nullable(),
  email: z.string(),
  opened_at: time,
  age_seconds: z.number().int().describe('Since the evaluation, when this answer was made'),
  status: z.enum(REVIEW_STATUSES),
  assignee: z.string().nullable().describe('`user:<id>` or `token:<id>` holding it (the last one, once resolved)'),
  claimed_at: time.nullable(),
  resolution: z.enum(REVIEW_RESOLUTIONS).nullable(),
  reason: z.string().nullable(),
  resolved_by: z.string().nullable(),
  resolved_at: time.nullable(),
});
const itemOf = (r: ReviewItem, now: number): z.output<typeof item> => ({
  evaluation_id: r.evaluation_id, event_type: r.event_type, user_id: r.user_id, email: r.email, opened_at: iso(r.opened_at),
  age_seconds: Math.max(0, Math.floor((now - r.opened_at) / 1000)), status: r.status, assignee: r.assignee, claimed_at: isoOrNull(r.claimed_at),
  resolution: r.resolution, reason: r.reason, resolved_by: r.resolved_by, resolved_at: isoOrNull(r.resolved_at),
});
const example = {
  evaluation_id: '019a4f6e-8c1b-7d2e-9f3a-1b2c3d4e5f60', event_type: 'account_register', user_id: 'usr_981', email: 'jane.doe@example.com',
  opened_at: '2026-11-21T12:00:00.000Z', age_seconds: 840, status: 'claimed' as const, assignee: 'user:usr_4f1c2a9b7d3e8f60', claimed_at: '2026-11-21T12:14:00.000Z',
  resolution: null, reason: null, resolved_by: null, resolved_at: null,
};
const resolvedExample = { ...example, status: 'resolved' as const, resolution: 'decline' as const, reason: 'Same device as three chargebacks', resolved_by: example.assignee, resolved_at: '2026-11-21T12:20:00.000Z' };

/** A store refusal that names a field (`reason: …`, `value: …`) as a problem naming it. */
function invalidField(error: unknown): never {
  if (error instanceof StoreRequestError && error.code === 'invalid') {
    const field = /^(reason|entries|list|kind|value|expires_at)\b:?\s*/.exec(error.message);
    const path = field === null ? '(body)' : field[1] === 'reason' || field[1] === 'entries' ? field[1] : `entries.${field[1]}`;
    throw problems.invalidRequest([{ path, message: field ? error.message.slice(field[0].length) || error.message : error.message }]);
  }
  throw error;
}

export const listReviewItems = adminRoute({
  method: 'GET', url: '/accounts/:account/review-items', tag: 'reviews', operationId: 'listReviewItems',
  summary: 'The review queue, oldest first',
  access: { role: 'analyst', account: true },
  params: accountParams,
  query: z.object({
    status: z.enum([...REVIEW_STATUSES, 'unresolved']).default('unresolved').describe('`unresolved`: open and claimed'),
    event_type: z.string().regex(EVENT_TYPE, '1 to 64 letters, digits, _ or -').optional(),
    rule: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a rule id: lower-case letters, digits and _').optional().describe('A rule that fired in the evaluation'),
    assignee: z.string().min(1).max(100).optional().describe('`user:<id>` or `token:<id>`'),
    after: z.string().regex(UUID, 'must be an evaluation id').optional().describe('`next_after` of the previous page'),
    limit: z.coerce.number().int().min(1).max(MAX_REVIEW_PAGE).default(50),
  }),
  success: {
    status: 200, description: 'One page',
    schema: z.object({ items: z.array(item), next_after: z.string().nullable().describe('Pass as `after` for the next page; null on the last') }),
    example: { items: [example], next_after: null },
  },
  handler: async ({ account, query: q, services, now }) => {
    const rows = await services.store.reviews.list(account.id, { status: q.status, eventType: q.event_type, rule: q.rule, assignee: q.assignee, afterId: q.after, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    return { items: page.map((r) => itemOf(r, now)), next_after: rows.length > q.limit ? page.at(-1)!.evaluation_id : null };
  },
});

export const reviewCounts = adminRoute({
  method: 'GET', url: '/accounts/:account/review-items/counts', tag: 'reviews', operationId: 'countReviewItems',
  summary: 'Review items per status',
  access: { role: 'analyst', account: true },
  params: accountParams,
  success: {
    status: 200, description: 'Counts (resolved items are kept as long as their evaluations, RETENTION_DAYS)',
    schema: z.object({ open: z.number().int(), claimed: z.number().int(), resolved: z.number().int() }),
    example: { open: 12, claimed: 2, resolved: 340 },
  },
  handler: async ({ account, services }) => services.store.reviews.counts(account.id),
});

/** The item, or a 404; an evaluation still in this replica's log queue is written first. */
async function findItem(store: Store, account: string, id: string): Promise<ReviewItem> {
  const queued = store.log.holds(id); // asked first: after a miss it may have been written since
  const found = (await store.reviews.get(account, id)) ?? (queued ? (await store.log.flush(), await store.reviews.get(account, id)) : undefined);
  if (found === undefined) throw problems.resourceNotFound(`account "${account}" has no review item for evaluation ${id}`);
  return found;
}

export const getReviewItem = adminRoute({
  method: 'GET', url: '/accounts/:account/review-items/:id', tag: 'reviews', operationId: 'getReviewItem',
  summary: 'One review item, by its evaluation id',
  access: { role: 'analyst', account: true },
  params: itemParams,
  success: { status: 200, description: 'The item', schema: item, example },
  handler: async ({ account, params, services, now }) => itemOf(await findItem(services.store, account.id, params.id), now),
});

export const claimReviewItem = adminRoute({
  method: 'POST', url: '/accounts/:account/review-items/:id/claim', tag: 'reviews', operationId: 'claimReviewItem',
  summary: 'Claim an open item (so no colleague works on it too)',
  access: { role: 'analyst', account: true },
  params: itemParams,
  success: { status: 200, description: 'The item, claimed by the caller (claiming one\'s own claim again changes nothing)', schema: item, example },
  problems: { 409: 'Claimed by someone else, or resolved: the detail names who' },
  handler: async ({ account, params, principal, services, now }) => {
    await findItem(services.store, account.id, params.id);
    return itemOf(await services.store.reviews.claim(account.id, params.id, { actor: principal.actor }), now);
  },
});

export const releaseReviewItem = adminRoute({
  method: 'POST', url: '/accounts/:account/review-items/:id/release', tag: 'reviews', operationId: 'releaseReviewItem',
  summary: 'Put a claimed item back in the queue',
  description: 'By its assignee, or by a colleague freeing a forgotten claim (audited either way).',
  access: { role: 'analyst', account: true },
  params: itemParams,
  success: { status: 200, description: 'The item, open again', schema: item, example: { ...example, status: 'open' as const, assignee: null, claimed_at: null } },
  problems: { 409: 'Not claimed, or resolved' },
  handler: async ({ account, params, principal, services, now }) => {
    await findItem(services.store, account.id, params.id);
    return itemOf(await services.store.reviews.release(account.id, params.id, { actor: principal.actor }), now);
  },
});

const listEntry = z.object({
  list: z.enum(LIST_NAMES).default('block'),
  kind: z.enum(LIST_KINDS),
  value: z.string().max(320),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional().describe('When it stops applying; absent or null: until removed'),
});

export const resolveReviewItem = adminRoute({
  method: 'POST', url: '/accounts/:account/review-items/:id/resolve', tag: 'reviews', operationId: 'resolveReviewItem',
  summary: 'Approve or decline an item, optionally adding list entries in the same step',
  description:
    'Resolves an open item, or one the caller claimed. Labels the evaluation (`decline` → `fraud`, `approve` → `legit`) and adds the list entries ' +
    `(at most ${MAX_RESOLUTION_ENTRIES}, with the resolution's reason), all or nothing; audited. ` +
    '`GET /v1/risk/evaluations/{id}` reports the resolution to the caller\'s backend.',
  access: { role: 'analyst', account: true },
  params: itemParams,
  body: z.strictObject({
    resolution: z.enum(REVIEW_RESOLUTIONS),
    reason: z.string().max(MAX_REVIEW_REASON * 2).describe(`Why, for whoever reads it next (1 to ${MAX_REVIEW_REASON} characters once trimmed)`),
    entries: z.array(listEntry).max(MAX_RESOLUTION_ENTRIES).optional().describe('List entries added with the resolution ("decline and block this device")'),
  }),
  example: { resolution: 'decline', reason: 'Same device as three chargebacks', entries: [{ list: 'block', kind: 'device', value: 'ab'.repeat(32) }] },
  success: {
    status: 200, description: 'The item resolved, and the list entries added',
    schema: z.object({ item, list_entries: z.array(z.object({ id: z.number().int(), list: z.enum(LIST_NAMES), kind: z.enum(LIST_KINDS), value: z.string() })) }),
    example: { item: resolvedExample, list_entries: [{ id: 41, list: 'block' as const, kind: 'device' as const, value: 'ab'.repeat(32) }] },
  },
  problems: { 409: 'Resolved already (the detail names by whom), claimed by someone else, or a list entry already on its list' },
  handler: async ({ account, params, body, principal, services, now }) => {
    await findItem(services.store, account.id, params.id);
    const entries = body.entries?.map((e) => ({ list: e.list, kind: e.kind, value: e.value, expires_at: e.expires_at === undefined || e.expires_at === null ? null : Date.parse(e.expires_at) }));
    const resolved = await services.store.reviews.resolve(account.id, params.id, { resolution: body.resolution, reason: body.reason, entries }, { actor: principal.actor })
      .catch(invalidField);
    if (resolved.entries.length > 0) await services.reloadConfiguration();
    return { item: itemOf(resolved.item, now), list_entries: resolved.entries.map((e) => ({ id: e.id, list: e.list, kind: e.kind, value: e.value })) };
  },
});

export const reviewRoutes = [listReviewItems, reviewCounts, getReviewItem, claimReviewItem, releaseReviewItem, resolveReviewItem];
