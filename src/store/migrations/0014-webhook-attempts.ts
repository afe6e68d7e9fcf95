import { types, type Migration } from './types.js';

/**
 * Webhooks, the rest of issue 27: an endpoint can be switched off without being removed; every
 * attempt at a delivery is a row of its own (status code, duration, error, the start of the
 * answer) for the console's delivery log; a delivery sent again names the one it repeats. Attempts
 * go with their delivery, and deliveries are pruned WEBHOOK_RETENTION_DAYS after they settle
 * (src/store/webhook-queue.ts).
 */
export const webhookAttempts: Migration = {
  version: 14,
  name: 'webhook attempts, endpoints switched off, deliveries sent again',
  async up(db, engine) {
    const { time } = types(engine);
    // 1 on, 0 off: both engines read an integer alike.
    await db.schema.alterTable('webhook_endpoints').addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1)).execute();
    await db.schema.alterTable('webhook_deliveries').addColumn('resent_from', 'text').execute();
    // An endpoint's delivery log, newest first.
    await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'created_at']).execute();
    await db.schema.createTable('webhook_attempts')
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text')
      .addColumn('started_at', time, (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('response', 'text')
      .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
      .execute();
  },
};
