import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import type { Database, WebhookAttemptRow, WebhookDeliveryRow } from './schema.js';

/**
 * The webhook delivery queue (PRODUCT.md "Review": delivered at least once, never lost across a
 * restart, one replica delivering each). A delivery is queued in the transaction of the change it
 * announces. A replica takes due deliveries with a lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so
 * two replicas claiming at once take different rows; SQLite has one writer); a replica that stops
 * mid-send leaves its lease to expire, and the delivery is sent again, once more at most, by
 * whoever claims it next (receivers deduplicate by `webhook-id`). An attempt is recorded only by
 * the lease's owner, with a row of its own in `webhook_attempts` (the delivery log). Retries back
 * off, and stop a day after the delivery was queued, so a delivery has at most about ten attempts.
 * Settled deliveries (delivered or failed) are pruned with their attempts `retentionMs` after
 * they were queued: the table holds at most the deliveries of that many days.
 */
export const WEBHOOK_QUEUE_DEFAULTS = {
  leaseMs: 60_000,
  /** Back-off after the nth failed attempt: 10 s, 1 min, 5 min, 30 min, 2 h, then every 5 h. */
  backoffMs: [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 18_000_000],
  giveUpAfterMs: 86_400_000,
  /** Deliveries one claim takes. */
  claimLimit: 20,
  /** Settled deliveries and their attempts are kept this long after they were queued. */
  retentionMs: 30 * 86_400_000,
  /** The start of a receiver's answer kept with an attempt. */
  responseChars: 1_024,
} as const;

export type QueuedDelivery = WebhookDeliveryRow;

export interface AttemptOutcome {
  outcome: 'delivered' | 'failed';
  status_code: number | null;
  error: string | null;
  duration_ms?: number;
  response?: string | null;
  /** When the attempt began (`now` of the record otherwise). */
  started_at?: number;
}

export type DeliveryAttempt = WebhookAttemptRow;

const MAX_PAGE = 100;

export class WebhookQueue {
  constructor(private readonly engine: Engine) {}

  /** Queues a delivery in `trx` (the change it announces commits with it, or neither does). */
  async enqueue(trx: Transaction<Database> | Kysely<Database>, delivery: { account: string; endpointId: string | null; type: string; payload: string; at: number; resentFrom?: string }): Promise<string> {
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    await trx.insertInto('webhook_deliveries').values({
      id, account_id: delivery.account, endpoint_id: delivery.endpointId, type: delivery.type, payload: delivery.payload, status: 'pending',
      attempts: 0, next_attempt_at: delivery.at, lease_owner: null, lease_until: null, last_status_code: null, last_error: null, created_at: delivery.at, delivered_at: null,
      resent_from: delivery.resentFrom ?? null,
    }).execute();
    return id;
  }

  /**
   * "Send again": a new delivery (a new `webhook-id`) of the same event to the same endpoint, due
   * now. Audited. `not_found` for another account's delivery or a removed endpoint's.
   */
  async resend(account: string, endpointId: string, deliveryId: string, at: number, by: { actor: string }): Promise<QueuedDelivery> {
    return this.engine.db.transaction().execute(async (trx) => {
      const original = await trx.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', account).where('endpoint_id', '=', endpointId).where('id', '=', deliveryId).executeTakeFirst();
      if (!original) throw new StoreRequestError('not_found', `webhook endpoint ${endpointId} has no delivery ${deliveryId}`);
      const id = await this.enqueue(trx, { account, endpointId, type: original.type, payload: original.payload, at, resentFrom: deliveryId });
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'webhook.resend', target: endpointId, before: null, after: { delivery: id, resent_from: deliveryId, type: original.type } });
      return numbers((await trx.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow()));
    });
  }

  /** A `webhook.test` event for the endpoint, due now (the caller sends it at once with `claim`). */
  async enqueueTest(account: string, endpointId: string, at: number, by: { actor: string }): Promise<string> {
    return this.engine.db.transaction().execute(async (trx) => {
      const endpoint = await trx.selectFrom('webhook_endpoints').select('id').where('account_id', '=', account).where('id', '=', endpointId).executeTakeFirst();
      if (!endpoint) throw new StoreRequestError('not_found', `account "${account}" has no webhook endpoint ${endpointId}`);
      const payload = JSON.stringify({ type: 'webhook.test', timestamp: new Date(at).toISOString(), data: { endpoint_id: endpointId, requested_by: by.actor } });
      const id = await this.enqueue(trx, { account, endpointId, type: 'webhook.test', payload, at });
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'webhook.test', target: endpointId, before: null, after: { delivery: id } });
      return id;
    });
  }

  /** Takes the one pending delivery `id` for `owner` (a test delivery sent at once); undefined when another holds it or it is settled. */
  async claim(id: string, owner: string, now: number, leaseMs: number = WEBHOOK_QUEUE_DEFAULTS.leaseMs): Promise<QueuedDelivery | undefined> {
    const changed = await this.engine.db.updateTable('webhook_deliveries').set({ lease_owner: owner, lease_until: now + leaseMs })
      .where('id', '=', id).where('status', '=', 'pending').where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)])).executeTakeFirst();
    return Number(changed.numUpdatedRows) === 1 ? this.get(id) : undefined;
  }

  /** An endpoint's deliveries, newest first, `limit` (at most 100) at a time before the delivery `before`. */
  async list(account: string, endpointId: string, options: { limit?: number; before?: string } = {}): Promise<QueuedDelivery[]> {
    let query = this.engine.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', account).where('endpoint_id', '=', endpointId);
    if (options.before !== undefined) {
      const before = await this.engine.db.selectFrom('webhook_deliveries').select(['created_at', 'id']).where('id', '=', options.before).executeTakeFirst();
      if (before) query = query.where((eb) => eb.or([eb('created_at', '<', before.created_at), eb.and([eb('created_at', '=', before.created_at), eb('id', '<', before.id)])]));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(Math.min(options.limit ?? 50, MAX_PAGE)).execute();
    return rows.map(numbers);
  }

  /** The attempts of these deliveries, first first (about ten each at most: the back-off gives up after a day). */
  async attempts(account: string, deliveryIds: readonly string[]): Promise<DeliveryAttempt[]> {
    if (deliveryIds.length === 0) return [];
    const rows = await this.engine.db.selectFrom('webhook_attempts').selectAll().where('account_id', '=', account).where('delivery_id', 'in', deliveryIds).orderBy('delivery_id').orderBy('attempt').execute();
    return rows.map((r) => ({ ...r, attempt: Number(r.attempt), started_at: Number(r.started_at), duration_ms: Number(r.duration_ms), status_code: r.status_code === null ? null : Number(r.status_code) }));
  }

  /** Removes settled deliveries queued before `now - retentionMs`, with their attempts; the number removed. */
  async prune(now: number, retentionMs: number = WEBHOOK_QUEUE_DEFAULTS.retentionMs, limit = 1_000): Promise<number> {
    const old = (await this.engine.db.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'pending').where('created_at', '<', now - retentionMs).limit(limit).execute()).map((r) => r.id);
    if (old.length === 0) return 0;
    // Attempts first: a prune cut between the two leaves deliveries the next one takes.
    await this.engine.db.deleteFrom('webhook_attempts').where('delivery_id', 'in', old).execute();
    await this.engine.db.deleteFrom('webhook_deliveries').where('id', 'in', old).execute();
    return old.length;
  }

  /** Takes up to `limit` due deliveries for `owner` until `now + leaseMs`: none is held by two live leases. */
  async claimDue(owner: string, now: number, options: { limit?: number; leaseMs?: number } = {}): Promise<QueuedDelivery[]> {
    const limit = options.limit ?? WEBHOOK_QUEUE_DEFAULTS.claimLimit;
    const until = now + (options.leaseMs ?? WEBHOOK_QUEUE_DEFAULTS.leaseMs);
    // A read first: on most passes nothing is due, and a read takes no write lock (SQLite's log writer shares the file).
    const any = await this.engine.db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)])).limit(1).executeTakeFirst();
    if (any === undefined) return [];
    const lock = this.engine.kind === 'postgres' ? sql`for update skip locked` : sql``;
    const { rows } = await sql<WebhookDeliveryRow>`update webhook_deliveries set lease_owner = ${owner}, lease_until = ${until}
      where id in (select id from webhook_deliveries where status = 'pending' and next_attempt_at <= ${now}
        and (lease_until is null or lease_until < ${now}) order by next_attempt_at limit ${limit} ${lock})
      returning *`.execute(this.engine.db);
    return rows.map(numbers);
  }

  /**
   * Records an attempt by the lease's owner: delivered, or failed and due again after the back-off
   * (or failed for good past a day). False when the lease was lost (it expired and another took it).
   */
  async record(id: string, owner: string, attempt: AttemptOutcome, now: number): Promise<boolean> {
    // One transaction on PostgreSQL. SQLite's main connection is one, used by one thread: its
    // statements run one after the other anyway, and a transaction held across awaits would only
    // block a second store on the same file (tests).
    const atomically = <T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> => (this.engine.kind === 'postgres' ? this.engine.db.transaction().execute(work) : work(this.engine.db));
    return atomically(async (trx) => {
      const row = await trx.selectFrom('webhook_deliveries').select(['attempts', 'created_at', 'account_id', 'endpoint_id']).where('id', '=', id).executeTakeFirst();
      if (!row) return false;
      const attempts = Number(row.attempts) + 1;
      const backoff = WEBHOOK_QUEUE_DEFAULTS.backoffMs[Math.min(attempts, WEBHOOK_QUEUE_DEFAULTS.backoffMs.length) - 1]!;
      const delivered = attempt.outcome === 'delivered';
      const givenUp = !delivered && now + backoff - Number(row.created_at) > WEBHOOK_QUEUE_DEFAULTS.giveUpAfterMs;
      const result = await trx.updateTable('webhook_deliveries').set({
        status: delivered ? 'delivered' : givenUp ? 'failed' : 'pending',
        attempts, next_attempt_at: delivered ? now : now + backoff, lease_owner: null, lease_until: null,
        last_status_code: attempt.status_code, last_error: attempt.error, delivered_at: delivered ? now : null,
      }).where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx.insertInto('webhook_attempts').values({
        delivery_id: id, attempt: attempts, account_id: row.account_id, endpoint_id: row.endpoint_id, started_at: attempt.started_at ?? now,
        status_code: attempt.status_code, duration_ms: attempt.duration_ms ?? 0, error: attempt.error, response: attempt.response?.slice(0, WEBHOOK_QUEUE_DEFAULTS.responseChars) ?? null,
      }).onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing()).execute();
      return true;
    });
  }

  async get(id: string): Promise<QueuedDelivery | undefined> {
    const row = await this.engine.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return row && numbers(row);
  }
}

/** PostgreSQL's bigint columns arrive as strings. */
function numbers(row: WebhookDeliveryRow): QueuedDelivery {
  const n = (v: number | null) => (v === null ? null : Number(v));
  return { ...row, attempts: Number(row.attempts), last_status_code: n(row.last_status_code), next_attempt_at: Number(row.next_attempt_at), created_at: Number(row.created_at), lease_until: n(row.lease_until), delivered_at: n(row.delivered_at) };
}
