import { randomBytes } from 'node:crypto';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import type { WebhookEndpointRow } from './schema.js';

/** Signing secrets are Standard Webhooks' `whsec_` and base64: made here, read by src/webhooks/signature.ts. */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, shown once to whoever creates or rotates the endpoint. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * An account's webhook endpoints (PRODUCT.md "Review"): a URL, the events it takes, a signing
 * secret shown once (at creation and at each rotation, never listed), and after a rotation the
 * previous secret, still signed with for ROTATION_OVERLAP_MS so receivers can switch without
 * dropping a delivery. Changes are audited without the secret.
 */
export const WEBHOOK_EVENTS = ['review.opened', 'review.resolved', 'evaluation.declined'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
export const MAX_ENDPOINTS = 10;

export type WebhookEndpoint = Omit<WebhookEndpointRow, 'secret' | 'previous_secret' | 'events'> & { events: WebhookEvent[]; rotating: boolean };

export class WebhookEndpoints {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  /** Adds an endpoint; the answer is the only place its secret is shown. */
  async create(account: string, endpoint: { url: string; events: WebhookEvent[] }, by: { actor: string }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    if (endpoint.events.length === 0 || endpoint.events.some((e) => !WEBHOOK_EVENTS.includes(e))) throw new StoreRequestError('invalid', `events: one or more of ${WEBHOOK_EVENTS.join(', ')}`);
    return this.engine.db.transaction().execute(async (trx) => {
      const { n } = await trx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number | string>().as('n')).where('account_id', '=', account).executeTakeFirstOrThrow();
      if (Number(n) >= MAX_ENDPOINTS) throw new StoreRequestError('conflict', `account "${account}" already has ${MAX_ENDPOINTS} webhook endpoints`);
      const secret = generateSecret();
      const row: WebhookEndpointRow = {
        id: `whe_${randomBytes(8).toString('hex')}`, account_id: account, url: endpoint.url, events: [...new Set(endpoint.events)].join(','), secret,
        previous_secret: null, previous_until: null, created_by: by.actor, created_at: this.now(),
      };
      await trx.insertInto('webhook_endpoints').values(row).execute();
      const shown = view(row, row.created_at);
      await appendAudit(trx, row.created_at, { actor: by.actor, account_id: account, action: 'webhook.create', target: row.id, before: null, after: shown });
      return { endpoint: shown, secret };
    });
  }

  /** A new secret, shown once; the current one stays valid (signed with too) for ROTATION_OVERLAP_MS. */
  async rotate(account: string, id: string, by: { actor: string }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    return this.engine.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).where('id', '=', id).executeTakeFirst();
      if (!row) throw new StoreRequestError('not_found', `account "${account}" has no webhook endpoint ${id}`);
      const at = this.now();
      const secret = generateSecret();
      await trx.updateTable('webhook_endpoints').set({ secret, previous_secret: row.secret, previous_until: at + ROTATION_OVERLAP_MS }).where('id', '=', id).execute();
      const shown = view({ ...row, secret, previous_secret: row.secret, previous_until: at + ROTATION_OVERLAP_MS }, at);
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'webhook.rotate', target: id, before: null, after: { previous_until: shown.previous_until } });
      return { endpoint: shown, secret };
    });
  }

  async list(account: string): Promise<WebhookEndpoint[]> {
    const now = this.now();
    return (await this.engine.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).orderBy('created_at').execute()).map((r) => view(r, now));
  }

  signing(account: string, id: string, at: number) {
    return signingOf(this.engine, account, id, at);
  }

  /** The endpoints of `account` that take `event`, with the secrets valid at `at` (for signing). */
  async subscribers(account: string, event: WebhookEvent, at: number): Promise<Array<{ id: string; url: string; secrets: string[] }>> {
    const rows = await this.engine.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).execute();
    return rows.filter((r) => r.events.split(',').includes(event)).map((r) => ({
      id: r.id, url: r.url,
      secrets: r.previous_secret !== null && Number(r.previous_until) > at ? [r.secret, r.previous_secret] : [r.secret],
    }));
  }
}

/** Where to send a delivery of endpoint `id` and the secrets to sign it with at `at`; undefined once it is removed. */
export async function signingOf(engine: Engine, account: string, id: string, at: number): Promise<{ url: string; secrets: string[] } | undefined> {
  const r = await engine.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).where('id', '=', id).executeTakeFirst();
  return r && { url: r.url, secrets: r.previous_secret !== null && Number(r.previous_until) > at ? [r.secret, r.previous_secret] : [r.secret] };
}

function view(row: WebhookEndpointRow, now: number): WebhookEndpoint {
  const until = row.previous_until === null ? null : Number(row.previous_until);
  return {
    id: row.id, account_id: row.account_id, url: row.url, events: row.events.split(',') as WebhookEvent[], created_by: row.created_by, created_at: Number(row.created_at),
    previous_until: until !== null && until > now ? until : null, rotating: until !== null && until > now,
  };
}
