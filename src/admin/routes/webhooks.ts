import { z } from 'zod';
import { WEBHOOK_EVENTS, type WebhookEndpoint } from '../../store/webhook-endpoints.js';
import type { Store } from '../../store/index.js';
import type { DeliveryAttempt, QueuedDelivery } from '../../store/webhook-queue.js';
import { adminRoute } from '../route.js';
import { accountParams, iso, isoOrNull, time } from '../schemas.js';

/**
 * An account's webhook endpoints (PRODUCT.md "Review"), for its admins: the signing secret is in
 * the answer to a creation or a rotation only, never listed; after a rotation both secrets sign
 * for a day. Each endpoint has its delivery log (every attempt: status code, duration, error),
 * "send again" and a test delivery sent at once. Audited in src/store/webhook-endpoints.ts and
 * src/store/webhook-queue.ts.
 */
const endpoint = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  enabled: z.boolean().describe('Off: nothing is queued for it'),
  created_by: z.string(),
  created_at: time,
  rotating: z.boolean().describe('A rotation\'s previous secret still signs too'),
  previous_until: time.nullable(),
});
const endpointOf = (e: WebhookEndpoint): z.output<typeof endpoint> => ({
  id: e.id, url: e.url, events: e.events, enabled: e.enabled, created_by: e.created_by, created_at: iso(e.created_at), rotating: e.rotating, previous_until: isoOrNull(e.previous_until),
});
const example = {
  id: 'whe_4f1c2a9b7d3e8f60', url: 'https://backend.example.com/hooks/risk', events: ['review.resolved' as const], enabled: true, created_by: 'user:usr_4f1c2a9b7d3e8f60',
  created_at: '2026-11-21T12:00:00.000Z', rotating: false, previous_until: null,
};
const withSecret = z.object({ endpoint, secret: z.string().describe('`whsec_…`: shown this once; keep it where the receiver reads it') });
const secretExample = { endpoint: example, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4nQ1r1Kx0U=' };

const events = z.array(z.enum(WEBHOOK_EVENTS)).min(1, 'Choose at least one event').max(WEBHOOK_EVENTS.length);
const endpointParams = accountParams.extend({ endpoint_id: z.string().regex(/^whe_[0-9a-f]{16}$/, 'an endpoint id (whe_…)') });
const endpointUrl = z.url({ protocol: /^https?$/ }).max(2_000).describe('HTTPS; HTTP only to a private address allowed by WEBHOOK_ALLOW_PRIVATE (development)');

export const listWebhookEndpoints = adminRoute({
  method: 'GET', url: '/accounts/:account/webhooks', tag: 'webhooks', operationId: 'listWebhookEndpoints',
  summary: 'The account\'s webhook endpoints (without their secrets)',
  access: { role: 'admin', account: true },
  params: accountParams,
  success: { status: 200, description: 'Oldest first', schema: z.object({ endpoints: z.array(endpoint) }), example: { endpoints: [example] } },
  handler: async ({ account, services }) => ({ endpoints: (await services.store.webhookEndpoints.list(account.id)).map(endpointOf) }),
});

export const createWebhookEndpoint = adminRoute({
  method: 'POST', url: '/accounts/:account/webhooks', tag: 'webhooks', operationId: 'createWebhookEndpoint',
  summary: 'Add a webhook endpoint; its signing secret is shown in this answer only',
  access: { role: 'admin', account: true },
  params: accountParams,
  body: z.strictObject({ url: endpointUrl, events, enabled: z.boolean().default(true) }),
  example: { url: 'https://backend.example.com/hooks/risk', events: ['review.resolved'] },
  success: { status: 201, description: 'The endpoint and its secret', schema: withSecret, example: secretExample },
  problems: { 409: 'The account has 10 endpoints' },
  handler: async ({ account, body, principal, services }) => {
    const created = await services.store.webhookEndpoints.create(account.id, { url: body.url, events: body.events, enabled: body.enabled }, { actor: principal.actor });
    return { endpoint: endpointOf(created.endpoint), secret: created.secret };
  },
});

export const rotateWebhookSecret = adminRoute({
  method: 'POST', url: '/accounts/:account/webhooks/:endpoint_id/rotate', tag: 'webhooks', operationId: 'rotateWebhookSecret',
  summary: 'A new signing secret, shown in this answer only; the previous one signs too for 24 hours',
  access: { role: 'admin', account: true },
  params: endpointParams,
  success: { status: 200, description: 'The endpoint and its new secret', schema: withSecret, example: { ...secretExample, endpoint: { ...example, rotating: true, previous_until: '2026-11-22T12:00:00.000Z' } } },
  handler: async ({ account, params, principal, services }) => {
    const rotated = await services.store.webhookEndpoints.rotate(account.id, params.endpoint_id, { actor: principal.actor });
    return { endpoint: endpointOf(rotated.endpoint), secret: rotated.secret };
  },
});

export const updateWebhookEndpoint = adminRoute({
  method: 'PATCH', url: '/accounts/:account/webhooks/:endpoint_id', tag: 'webhooks', operationId: 'updateWebhookEndpoint',
  summary: 'Change an endpoint\'s URL, events, or switch it on or off (off: its pending deliveries fail, and nothing more is queued)',
  access: { role: 'admin', account: true },
  params: endpointParams,
  body: z.strictObject({ url: endpointUrl.optional(), events: events.optional(), enabled: z.boolean().optional() })
    .refine((b) => b.url !== undefined || b.events !== undefined || b.enabled !== undefined, { message: 'Change the URL, the events or enabled', path: ['url'] }),
  example: { enabled: false },
  success: { status: 200, description: 'The endpoint as it is now', schema: endpoint, example: { ...example, enabled: false } },
  handler: async ({ account, params, body, principal, services }) =>
    endpointOf(await services.store.webhookEndpoints.update(account.id, params.endpoint_id, body, { actor: principal.actor })),
});

export const deleteWebhookEndpoint = adminRoute({
  method: 'DELETE', url: '/accounts/:account/webhooks/:endpoint_id', tag: 'webhooks', operationId: 'deleteWebhookEndpoint',
  summary: 'Remove an endpoint, with its pending deliveries and its delivery log',
  access: { role: 'admin', account: true },
  params: endpointParams,
  success: { status: 204, description: 'Removed' },
  handler: async ({ account, params, principal, services }) => {
    await services.store.webhookEndpoints.remove(account.id, params.endpoint_id, { actor: principal.actor });
  },
});

const attempt = z.object({
  attempt: z.number().int().describe('1 for the first'),
  started_at: time,
  status_code: z.number().int().nullable().describe('null: no answer (refused, deadline, connection error)'),
  duration_ms: z.number().int(),
  error: z.string().nullable().describe('`status 503`, `redirect not followed (302)`, `deadline (5000 ms)`, `private address refused (10.0.0.1)`, `ECONNREFUSED`…'),
  response: z.string().nullable().describe('The start of the answer (at most 1 KiB)'),
});
const delivery = z.object({
  id: z.string().describe('`msg_…`: the `webhook-id` header, the same on every attempt'),
  type: z.string().describe('review.opened, review.resolved, evaluation.declined or webhook.test'),
  status: z.enum(['pending', 'delivered', 'failed']).describe('failed: given up (a day of retries) or the endpoint was switched off'),
  created_at: time,
  next_attempt_at: time.nullable().describe('While pending'),
  delivered_at: time.nullable(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  resent_from: z.string().nullable().describe('The delivery this one sends again'),
  payload: z.unknown().describe('The body sent'),
  attempts: z.array(attempt),
});
const attemptOf = (a: DeliveryAttempt): z.output<typeof attempt> => ({
  attempt: a.attempt, started_at: iso(a.started_at), status_code: a.status_code, duration_ms: a.duration_ms, error: a.error, response: a.response,
});
const deliveryOf = (d: QueuedDelivery, attempts: readonly DeliveryAttempt[]): z.output<typeof delivery> => ({
  id: d.id, type: d.type, status: d.status, created_at: iso(d.created_at), next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
  delivered_at: isoOrNull(d.delivered_at), last_status_code: d.last_status_code, last_error: d.last_error, resent_from: d.resent_from,
  payload: JSON.parse(d.payload) as unknown, attempts: attempts.filter((a) => a.delivery_id === d.id).map(attemptOf),
});
const deliveryExample = {
  id: 'msg_0f8e2b1c9d7a4e3f8a6b5c4d3e2f1a0b', type: 'review.resolved', status: 'delivered' as const, created_at: '2026-11-21T12:00:00.000Z', next_attempt_at: null,
  delivered_at: '2026-11-21T12:00:10.412Z', last_status_code: 204, last_error: null, resent_from: null,
  payload: { type: 'review.resolved', timestamp: '2026-11-21T12:00:00.000Z', data: { evaluation_id: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b', resolution: 'approve' } },
  attempts: [
    { attempt: 1, started_at: '2026-11-21T12:00:00.300Z', status_code: 503, duration_ms: 41, error: 'status 503', response: 'busy' },
    { attempt: 2, started_at: '2026-11-21T12:00:10.380Z', status_code: 204, duration_ms: 32, error: null, response: '' },
  ],
};

async function deliveryIn(store: Store, account: string, d: QueuedDelivery) {
  return deliveryOf(d, await store.webhookQueue.attempts(account, [d.id]));
}

export const listWebhookDeliveries = adminRoute({
  method: 'GET', url: '/accounts/:account/webhooks/:endpoint_id/deliveries', tag: 'webhooks', operationId: 'listWebhookDeliveries',
  summary: 'An endpoint\'s delivery log, newest first: each delivery with every attempt (status code, duration, error)',
  access: { role: 'admin', account: true },
  params: endpointParams,
  query: z.object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    before: z.string().regex(/^msg_[0-9a-f]{32}$/, 'a delivery id (msg_…)').optional().describe('`next_before` of the previous page'),
  }),
  success: {
    status: 200, description: 'One page; settled deliveries are kept 30 days',
    schema: z.object({ deliveries: z.array(delivery), next_before: z.string().nullable().describe('Pass as `before` for the next page; null on the last') }),
    example: { deliveries: [deliveryExample], next_before: null },
  },
  handler: async ({ account, params, query, services }) => {
    await services.store.webhookEndpoints.get(account.id, params.endpoint_id);
    const rows = await services.store.webhookQueue.list(account.id, params.endpoint_id, { limit: query.limit + 1, before: query.before });
    const page = rows.slice(0, query.limit);
    const attempts = await services.store.webhookQueue.attempts(account.id, page.map((d) => d.id));
    return { deliveries: page.map((d) => deliveryOf(d, attempts)), next_before: rows.length > query.limit ? page.at(-1)!.id : null };
  },
});

export const resendWebhookDelivery = adminRoute({
  method: 'POST', url: '/accounts/:account/webhooks/:endpoint_id/deliveries/:delivery_id/resend', tag: 'webhooks', operationId: 'resendWebhookDelivery',
  summary: 'Send again: a new delivery (a new webhook-id) of the same event, queued now',
  access: { role: 'admin', account: true },
  params: endpointParams.extend({ delivery_id: z.string().regex(/^msg_[0-9a-f]{32}$/, 'a delivery id (msg_…)') }),
  success: { status: 202, description: 'The new delivery, queued (sent within a second by a replica\'s worker)', schema: delivery, example: { ...deliveryExample, id: 'msg_1a2b3c4d5e6f708192a3b4c5d6e7f809', status: 'pending' as const, delivered_at: null, last_status_code: null, resent_from: deliveryExample.id, attempts: [] } },
  handler: async ({ account, params, principal, services, now }) => {
    const queued = await services.store.webhookQueue.resend(account.id, params.endpoint_id, params.delivery_id, now, { actor: principal.actor });
    return deliveryIn(services.store, account.id, queued);
  },
});

export const testWebhookEndpoint = adminRoute({
  method: 'POST', url: '/accounts/:account/webhooks/:endpoint_id/test', tag: 'webhooks', operationId: 'testWebhookEndpoint',
  summary: 'Send a `webhook.test` event now and answer with its attempt (retried on the back-off like any delivery when it fails)',
  access: { role: 'admin', account: true },
  params: endpointParams,
  success: { status: 200, description: 'The test delivery after its first attempt', schema: delivery, example: { ...deliveryExample, type: 'webhook.test', payload: { type: 'webhook.test', timestamp: '2026-11-21T12:00:00.000Z', data: { endpoint_id: 'whe_4f1c2a9b7d3e8f60', requested_by: 'user:usr_4f1c2a9b7d3e8f60' } }, attempts: [deliveryExample.attempts[1]!] } },
  handler: async ({ account, params, principal, services, now }) => {
    const id = await services.store.webhookQueue.enqueueTest(account.id, params.endpoint_id, now, { actor: principal.actor });
    // Sent by this replica at once (the deadline bounds the wait); another replica's worker may have taken it first.
    await services.webhooks.sendNow(id);
    return deliveryIn(services.store, account.id, (await services.store.webhookQueue.get(id))!);
  },
});

export const webhookRoutes = [listWebhookEndpoints, createWebhookEndpoint, rotateWebhookSecret, updateWebhookEndpoint, deleteWebhookEndpoint, listWebhookDeliveries, resendWebhookDelivery, testWebhookEndpoint];
