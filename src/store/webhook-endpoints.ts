import { randomBytes } from 'node:crypto';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import type { WebhookEndpointRow } from './schema.js';
import { SecretBox } from './webhook-secret-box.js';

/** Signing secrets are Standard Webhooks' `whsec_` and base64: made here, read by src/webhooks/signature.ts. */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, shown once to whoever creates or rotates the endpoint. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * An account's webhook endpoints (PRODUCT.md "Review"): a URL, the events it takes, whether it is
 * on, a signing secret shown once (at creation and at each rotation, never listed; sealed at rest,
 * src/store/webhook-secret-box.ts), and after a rotation the previous secret, still signed with for
 * ROTATION_OVERLAP_MS so receivers can switch without dropping a delivery. Changes are audited
 * without the secret.
 */
export const WEBHOOK_EVENTS = ['review.opened', 'review.resolved', 'evaluation.declined'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
export const MAX_ENDPOINTS = 10;

export type WebhookEndpoint = Omit<WebhookEndpointRow, 'secret' | 'previous_secret' | 'events' | 'enabled'> & { events: WebhookEvent[]; enabled: boolean; rotating: boolean };

export interface EndpointChange {
  url?: string;
  events?: WebhookEvent[];
  enabled?: boolean;
}

export class WebhookEndpoints {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
    private readonly box: SecretBox = new SecretBox(undefined),
  ) {}

  /** Adds an endpoint; the answer is the only place its secret is shown. */
  async create(account: string, endpoint: { url: string; events: WebhookEvent[]; enabled?: boolean }, by: { actor: string }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    checkEvents(endpoint.events);
    return this.engine.db.transaction().execute(async (trx) => {
      const { n } = await trx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number | string>().as('n')).where('account_id', '=', account).executeTakeFirstOrThrow();
      if (Number(n) >= MAX_ENDPOINTS) throw new StoreRequestError('conflict', `account "${account}" already has ${MAX_ENDPOINTS} webhook endpoints`);
      const secret = generateSecret();
      const id = `whe_${randomBytes(8).toString('hex')}`;
      const row: WebhookEndpointRow = {
        id, account_id: account, url: endpoint.url, events: [...new Set(endpoint.events)].join(','), secret: this.box.seal(secret, id),
        previous_secret: null, previous_until: null, created_by: by.actor, created_at: this.now(), enabled: endpoint.enabled === false ? 0 : 1,
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
      if (!row) throw notFound(account, id);
      const at = this.now();
      const secret = generateSecret();
      const changed = { secret: this.box.seal(secret, id), previous_secret: row.secret, previous_until: at + ROTATION_OVERLAP_MS };
      await trx.updateTable('webhook_endpoints').set(changed).where('id', '=', id).execute();
      const shown = view({ ...row, ...changed }, at);
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'webhook.rotate', target: id, before: null, after: { previous_until: shown.previous_until } });
      return { endpoint: shown, secret };
    });
  }

  /**
   * Changes the URL, the events or whether the endpoint is on. Switched off, nothing more is
   * queued for it and its pending deliveries fail now (`endpoint switched off`; each can be sent
   * again). A delivery already queued goes to the URL current when it is sent.
   */
  async update(account: string, id: string, change: EndpointChange, by: { actor: string }): Promise<WebhookEndpoint> {
    if (change.events !== undefined) checkEvents(change.events);
    return this.engine.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound(account, id);
      const at = this.now();
      const next: WebhookEndpointRow = {
        ...row,
        url: change.url ?? row.url,
        events: change.events === undefined ? row.events : [...new Set(change.events)].join(','),
        enabled: change.enabled === undefined ? Number(row.enabled) : change.enabled ? 1 : 0,
      };
      await trx.updateTable('webhook_endpoints').set({ url: next.url, events: next.events, enabled: next.enabled }).where('id', '=', id).execute();
      if (next.enabled === 0 && Number(row.enabled) === 1) {
        await trx.updateTable('webhook_deliveries').set({ status: 'failed', last_error: 'endpoint switched off', lease_owner: null, lease_until: null })
          .where('endpoint_id', '=', id).where('status', '=', 'pending').execute();
      }
      const before = view(row, at);
      const after = view(next, at);
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'webhook.update', target: id, before: { url: before.url, events: before.events, enabled: before.enabled }, after: { url: after.url, events: after.events, enabled: after.enabled } });
      return after;
    });
  }

  /** Removes the endpoint with its deliveries and their attempts (the audit keeps that it was removed). */
  async remove(account: string, id: string, by: { actor: string }): Promise<void> {
    await this.engine.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound(account, id);
      const at = this.now();
      await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'webhook.delete', target: id, before: view(row, at), after: null });
    });
  }

  async list(account: string): Promise<WebhookEndpoint[]> {
    const now = this.now();
    return (await this.engine.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).orderBy('created_at').execute()).map((r) => view(r, now));
  }

  async get(account: string, id: string): Promise<WebhookEndpoint> {
    const row = await this.engine.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(account, id);
    return view(row, this.now());
  }

  /** Where to send a delivery of endpoint `id` and the secrets to sign it with at `at`; undefined once it is removed. Throws SecretUnavailableError when a sealed secret does not open. */
  async signing(account: string, id: string, at: number): Promise<{ url: string; secrets: string[] } | undefined> {
    const r = await this.engine.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).where('id', '=', id).executeTakeFirst();
    return r && { url: r.url, secrets: this.secretsOf(r, at) };
  }

  /** The endpoints of `account` that take `event`, with the secrets valid at `at` (for signing). */
  async subscribers(account: string, event: WebhookEvent, at: number): Promise<Array<{ id: string; url: string; secrets: string[] }>> {
    const rows = await this.engine.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account).execute();
    return rows.filter((r) => Number(r.enabled) === 1 && r.events.split(',').includes(event)).map((r) => ({ id: r.id, url: r.url, secrets: this.secretsOf(r, at) }));
  }

  /** With WEBHOOK_SECRET_KEY set, seals the secrets stored before it was (at start); the number sealed. */
  async sealStored(): Promise<number> {
    if (!this.box.sealing) return 0;
    const rows = await this.engine.db.selectFrom('webhook_endpoints').select(['id', 'secret', 'previous_secret']).execute();
    let sealed = 0;
    for (const row of rows) {
      const secretOpen = !SecretBox.isSealed(row.secret);
      const previousOpen = row.previous_secret !== null && !SecretBox.isSealed(row.previous_secret);
      if (!secretOpen && !previousOpen) continue;
      await this.engine.db.updateTable('webhook_endpoints').set({
        secret: secretOpen ? this.box.seal(row.secret, row.id) : row.secret,
        previous_secret: previousOpen ? this.box.seal(row.previous_secret!, row.id) : row.previous_secret,
      }).where('id', '=', row.id).where('secret', '=', row.secret).execute();
      sealed++;
    }
    return sealed;
  }

  /** Whether any stored secret is not sealed (the start warns in production). */
  async anyUnsealed(): Promise<boolean> {
    const rows = await this.engine.db.selectFrom('webhook_endpoints').select('secret').execute();
    return rows.some((r) => !SecretBox.isSealed(r.secret));
  }

  private secretsOf(r: WebhookEndpointRow, at: number): string[] {
    const current = this.box.open(r.secret, r.id);
    return r.previous_secret !== null && Number(r.previous_until) > at ? [current, this.box.open(r.previous_secret, r.id)] : [current];
  }
}

function checkEvents(events: readonly string[]): void {
  if (events.length === 0 || events.some((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e))) throw new StoreRequestError('invalid', `events: one or more of ${WEBHOOK_EVENTS.join(', ')}`);
}

function notFound(account: string, id: string): StoreRequestError {
  return new StoreRequestError('not_found', `account "${account}" has no webhook endpoint ${id}`);
}

function view(row: WebhookEndpointRow, now: number): WebhookEndpoint {
  const until = row.previous_until === null ? null : Number(row.previous_until);
  return {
    id: row.id, account_id: row.account_id, url: row.url, events: row.events.split(',') as WebhookEvent[], enabled: Number(row.enabled) === 1,
    created_by: row.created_by, created_at: Number(row.created_at),
    previous_until: until !== null && until > now ? until : null, rotating: until !== null && until > now,
  };
}
