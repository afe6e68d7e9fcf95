import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Engine } from './engine.js';
import type { Database, WebhookDeliveryRow } from './schema.js';

/**
 * The webhook delivery queue (PRODUCT.md "Review": delivered at least once, never lost across a
 * restart, one replica delivering each). A delivery is queued in the transaction of the change it
 * announces. A replica takes due deliveries with a lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so
 * two replicas claiming at once take different rows; SQLite has one writer); a replica that stops
 * mid-send leaves its lease to expire, and the delivery is sent again, once more at most, by
 * whoever claims it next (receivers deduplicate by `webhook-id`). An attempt is recorded only by
 * the lease's owner. Retries back off, and stop a day after the delivery was queued.
 */
export const WEBHOOK_QUEUE_DEFAULTS = {
  leaseMs: 60_000,
  /** Back-off after the nth failed attempt: 10 s, 1 min, 5 min, 30 min, 2 h, then every 5 h. */
  backoffMs: [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 18_000_000],
  giveUpAfterMs: 86_400_000,
  /** Deliveries one claim takes. */
  claimLimit: 20,
} as const;

export type QueuedDelivery = WebhookDeliveryRow;

export interface AttemptOutcome {
  outcome: 'delivered' | 'failed';
  status_code: number | null;
  error: string | null;
}

export class WebhookQueue {
  constructor(private readonly engine: Engine) {}

  /** Queues a delivery in `trx` (the change it announces commits with it, or neither does). */
  async enqueue(trx: Transaction<Database> | Kysely<Database>, delivery: { account: string; endpointId: string | null; type: string; payload: string; at: number }): Promise<string> {
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    await trx.insertInto('webhook_deliveries').values({
      id, account_id: delivery.account, endpoint_id: delivery.endpointId, type: delivery.type, payload: delivery.payload, status: 'pending',
      attempts: 0, next_attempt_at: delivery.at, lease_owner: null, lease_until: null, last_status_code: null, last_error: null, created_at: delivery.at, delivered_at: null,
    }).execute();
    return id;
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
    const row = await this.engine.db.selectFrom('webhook_deliveries').select(['attempts', 'created_at']).where('id', '=', id).executeTakeFirst();
    if (!row) return false;
    const attempts = Number(row.attempts) + 1;
    const backoff = WEBHOOK_QUEUE_DEFAULTS.backoffMs[Math.min(attempts, WEBHOOK_QUEUE_DEFAULTS.backoffMs.length) - 1]!;
    const delivered = attempt.outcome === 'delivered';
    const givenUp = !delivered && now + backoff - Number(row.created_at) > WEBHOOK_QUEUE_DEFAULTS.giveUpAfterMs;
    const result = await this.engine.db.updateTable('webhook_deliveries').set({
      status: delivered ? 'delivered' : givenUp ? 'failed' : 'pending',
      attempts, next_attempt_at: delivered ? now : now + backoff, lease_owner: null, lease_until: null,
      last_status_code: attempt.status_code, last_error: attempt.error, delivered_at: delivered ? now : null,
    }).where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async get(id: string): Promise<QueuedDelivery | undefined> {
    const row = await this.engine.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return row && numbers(row);
  }
}

/** PostgreSQL's bigint columns arrive as strings. */
function numbers(row: WebhookDeliveryRow): QueuedDelivery {
  const n = (v: number | null) => (v === null ? null : Number(v));
  return { ...row, attempts: Number(row.attempts), next_attempt_at: Number(row.next_attempt_at), created_at: Number(row.created_at), lease_until: n(row.lease_until), delivered_at: n(row.delivered_at) };
}
