import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/index.js';
import { sendWebhook, type WebhookAttempt } from './send.js';
import { webhookHeaders } from './signature.js';

/**
 * Sends what the webhook queue holds (src/store/webhook-queue.ts): every `intervalMs`, this
 * replica claims the due deliveries under its own lease owner, signs each with its endpoint's valid
 * secrets at the moment of sending, sends them at once (at most the queue's claim limit, 20, in
 * flight) and records each attempt. One pass at a time; none while the store is down.
 */
export interface WebhookWorkerOptions {
  store: Store;
  logger: FastifyBaseLogger;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  intervalMs?: number;
  deadlineMs?: number;
  now?: () => number;
}

export interface WebhookWorker {
  /** One pass now (tests; the timer runs them otherwise); resolves when its attempts are recorded. */
  tick(): Promise<void>;
  close(): Promise<void>;
}

export const WEBHOOK_DEADLINE_MS = 5_000;

export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const owner = `replica:${randomUUID()}`;
  let running: Promise<void> | null = null;
  let closed = false;

  const pass = async () => {
    const due = await store.webhookQueue.claimDue(owner, now());
    await Promise.all(due.map(async (delivery) => {
      const endpoint = delivery.endpoint_id === null ? undefined : await store.webhookEndpoints.signing(delivery.account_id, delivery.endpoint_id, now());
      let attempt: Pick<WebhookAttempt, 'outcome' | 'status_code' | 'error'>;
      if (endpoint === undefined) attempt = { outcome: 'failed', status_code: null, error: 'endpoint removed' };
      else {
        const headers = webhookHeaders(endpoint.secrets, delivery.id, Math.floor(now() / 1000), delivery.payload);
        attempt = await sendWebhook({ url: endpoint.url, body: delivery.payload, headers, deadlineMs: options.deadlineMs ?? WEBHOOK_DEADLINE_MS, allowPrivate: options.allowPrivate });
      }
      await store.webhookQueue.record(delivery.id, owner, attempt, now());
      if (attempt.outcome === 'failed') logger.warn({ delivery: delivery.id, endpoint: delivery.endpoint_id, status: attempt.status_code, error: attempt.error }, 'webhook delivery failed; retried on the back-off');
    }));
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
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
