import { z } from 'zod';
import { WEBHOOK_EVENTS, type WebhookEndpoint } from '../../store/webhook-endpoints.js';
import { adminRoute } from '../route.js';
import { accountParams, iso, isoOrNull, time } from '../schemas.js';

/**
 * An account's webhook endpoints (PRODUCT.md "Review"), for its admins: the signing secret is in
 * the answer to a creation or a rotation only, never listed; after a rotation both secrets sign
 * for a day. Audited in src/store/webhook-endpoints.ts.
 */
const endpoint = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  created_by: z.string(),
  created_at: time,
  rotating: z.boolean().describe('A rotation\'s previous secret still signs too'),
  previous_until: time.nullable(),
});
const endpointOf = (e: WebhookEndpoint): z.output<typeof endpoint> => ({
  id: e.id, url: e.url, events: e.events, created_by: e.created_by, created_at: iso(e.created_at), rotating: e.rotating, previous_until: isoOrNull(e.previous_until),
});
const example = {
  id: 'whe_4f1c2a9b7d3e8f60', url: 'https://backend.example.com/hooks/risk', events: ['review.resolved' as const], created_by: 'user:usr_4f1c2a9b7d3e8f60',
  created_at: '2026-11-21T12:00:00.000Z', rotating: false, previous_until: null,
};
const withSecret = z.object({ endpoint, secret: z.string().describe('`whsec_…`: shown this once; keep it where the receiver reads it') });
const secretExample = { endpoint: example, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4nQ1r1Kx0U=' };

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
  body: z.strictObject({ url: endpointUrl, events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length) }),
  example: { url: 'https://backend.example.com/hooks/risk', events: ['review.resolved'] },
  success: { status: 201, description: 'The endpoint and its secret', schema: withSecret, example: secretExample },
  problems: { 409: 'The account has 10 endpoints' },
  handler: async ({ account, body, principal, services }) => {
    const created = await services.store.webhookEndpoints.create(account.id, { url: body.url, events: body.events }, { actor: principal.actor });
    return { endpoint: endpointOf(created.endpoint), secret: created.secret };
  },
});

export const rotateWebhookSecret = adminRoute({
  method: 'POST', url: '/accounts/:account/webhooks/:endpoint_id/rotate', tag: 'webhooks', operationId: 'rotateWebhookSecret',
  summary: 'A new signing secret, shown in this answer only; the previous one signs too for 24 hours',
  access: { role: 'admin', account: true },
  params: accountParams.extend({ endpoint_id: z.string().regex(/^whe_[0-9a-f]{16}$/, 'an endpoint id (whe_…)') }),
  success: { status: 200, description: 'The endpoint and its new secret', schema: withSecret, example: { ...secretExample, endpoint: { ...example, rotating: true, previous_until: '2026-11-22T12:00:00.000Z' } } },
  handler: async ({ account, params, principal, services }) => {
    const rotated = await services.store.webhookEndpoints.rotate(account.id, params.endpoint_id, { actor: principal.actor });
    return { endpoint: endpointOf(rotated.endpoint), secret: rotated.secret };
  },
});

export const webhookRoutes = [listWebhookEndpoints, createWebhookEndpoint, rotateWebhookSecret];
