import { randomUUID } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/index.js';
import type { AttemptOutcome, QueuedDelivery } from '../store/webhook-queue.js';
import { SecretUnavailableError } from '../store/webhook-secret-box.js';
import { sendWebhook } from './send.js';
import { webhookHeaders } from './signature.js';

/**
 * Sends what the webhook queue holds (src/store/webhook-queue.ts): every `intervalMs`, this
 * replica claims the due deliveries under its own lease owner, signs each with its endpoint's valid
 * secrets at the moment of sending, sends them at once (at most the queue's claim limit, 20, in
 * flight) and records each attempt (the delivery log). One pass at a time; none while the store is
 * down. Once an hour it prunes settled deliveries past their retention. `sendNow` sends one
 * delivery at once (a test delivery from the console) and answers with its attempt.
 */
export interface WebhookWorkerOptions {
  store: Store;
  logger: FastifyBaseLogger;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  intervalMs?: number;
  deadlineMs?: number;
  now?: () => number;
  /** The look-up for endpoint host names (tests point it at their own resolver); the system's by default. */
  lookup?: LookupFunction;
}

export interface WebhookWorker {
  /** One pass now (tests; the timer runs them otherwise); resolves when its attempts are recorded. */
  tick(): Promise<void>;
  /** Claims the pending delivery `id` and sends it now; its attempt, or undefined when another replica holds it. */
  sendNow(id: string): Promise<AttemptOutcome | undefined>;
  close(): Promise<void>;
}

export const WEBHOOK_DEADLINE_MS = 5_000;
const PRUNE_EVERY_MS = 3_600_000;

export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const owner = `replica:${randomUUID()}`;
  let running: Promise<void> | null = null;
  let closed = false;
  let prunedAt = 0;

  const attempt = async (delivery: QueuedDelivery): Promise<AttemptOutcome> => {
    const startedAt = now();
    let result: AttemptOutcome;
    try {
      const endpoint = delivery.endpoint_id === null ? undefined : await store.webhookEndpoints.signing(delivery.account_id, delivery.endpoint_id, startedAt);
      if (endpoint === undefined) result = { outcome: 'failed', status_code: null, error: 'endpoint removed' };
      else {
        const headers = webhookHeaders(endpoint.secrets, delivery.id, Math.floor(startedAt / 1000), delivery.payload);
        result = await sendWebhook({ url: endpoint.url, body: delivery.payload, headers, deadlineMs: options.deadlineMs ?? WEBHOOK_DEADLINE_MS, allowPrivate: options.allowPrivate, lookup: options.lookup });
      }
    } catch (error) {
      // Never sent unsigned: a secret that does not open fails the attempt, retried on the back-off.
      if (!(error instanceof SecretUnavailableError)) throw error;
      result = { outcome: 'failed', status_code: null, error: error.message };
    }
    result.started_at = startedAt;
    await store.webhookQueue.record(delivery.id, owner, result, now());
    if (result.outcome === 'failed') logger.warn({ delivery: delivery.id, endpoint: delivery.endpoint_id, status: result.status_code, error: result.error }, 'webhook delivery failed; retried on the back-off');
    return result;
  };

  const pass = async () => {
    const due = await store.webhookQueue.claimDue(owner, now());
    await Promise.all(due.map(attempt));
    if (now() - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = now();
      await store.webhookQueue.prune(prunedAt);
    }
  };

  const tick = (): Promise<void> => {
    if (closed || !store.health.available) return Promise.resolve();
    running ??= pass().catch((error: Error) => logger.warn({ error: error.message }, 'webhook deliveries not sent; trying again')).finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => void tick(), options.intervalMs ?? 1_000);
  timer.unref();
  return {
    tick,
    async sendNow(id) {
      const delivery = await store.webhookQueue.claim(id, owner, now());
      return delivery && attempt(delivery);
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
