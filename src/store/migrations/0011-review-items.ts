import { sql } from 'kysely';
import { types, type Migration } from './types.js';

/**
 * Review items (issue 27, PRODUCT.md "Review"): every evaluation answered `review` is held until a
 * person or the caller's backend resolves it. Written by the log writer in the evaluation's own
 * batch (so an item exists exactly when its evaluation does), pruned and erased with it. A claim
 * and a resolution are conditional updates of the one row: two analysts never resolve it twice.
 */
export const reviewItems: Migration = {
  version: 11,
  name: 'review items and webhook deliveries',
  async up(db, engine) {
    const { time } = types(engine);
    await db.schema.createTable('review_items')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('evaluation_id', engine === 'postgres' ? 'uuid' : 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('opened_at', time, (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('open', 'claimed', 'resolved')`))
      .addColumn('assignee', 'text')
      .addColumn('claimed_at', time)
      .addColumn('resolution', 'text', (c) => c.check(sql`resolution in ('approve', 'decline')`))
      .addColumn('reason', 'text')
      .addColumn('resolved_by', 'text')
      .addColumn('resolved_at', time)
      .addPrimaryKeyConstraint('review_items_pk', ['account_id', 'evaluation_id'])
      .execute();
    // The queue: an account's items of one status, oldest first (an evaluation id sorts by time).
    await db.schema.createIndex('review_items_queue').on('review_items').columns(['account_id', 'status', 'evaluation_id']).execute();
    // Pruned with the evaluation log.
    await db.schema.createIndex('review_items_evaluation').on('review_items').columns(['evaluation_id']).execute();

    // Webhook endpoints (src/store/webhook-endpoints.ts). The signing secret is kept as it is: an
    // HMAC needs it (unlike an API key, which is only compared, and so hashed).
    await db.schema.createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_until', time)
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', time, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').columns(['account_id']).execute();

    // Webhook deliveries (src/store/webhook-queue.ts): queued in the transaction of the change they
    // announce, so none is lost; claimed by one replica at a time with a lease.
    await db.schema.createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text')
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', time, (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', time)
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('delivered_at', time)
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  },
};
