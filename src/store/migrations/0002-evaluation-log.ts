import { sql } from 'kysely';
import { types, type Migration } from './types.js';

/**
 * The evaluation log. No foreign key to accounts: the log is written in batches off the request
 * path and pruned by age; a key check per row would cost every write for nothing it protects.
 * Every index leads with the account: every search is one account's (PRODUCT.md), and ends with
 * the id, which sorts by time, so "newest first" and cursor pages come from the index alone.
 */
export const evaluationLog: Migration = {
  version: 2,
  name: 'evaluation log',
  async up(db, engine) {
    const { time, document } = types(engine);
    await db.schema.createTable('evaluations')
      .addColumn('id', engine === 'postgres' ? 'uuid' : 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('evaluated_at', time, (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('email_domain', 'text', (c) => c.notNull())
      .addColumn('ip_key', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('device_hash', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('fraud_score', 'integer', (c) => c.notNull())
      .addColumn('rule_set_version', 'integer')
      .addColumn('request', document, (c) => c.notNull())
      .addColumn('response', document, (c) => c.notNull())
      .execute();
    const index = (name: string, columns: string[], whereNotNull?: string) => {
      const builder = db.schema.createIndex(`evaluations_${name}`).on('evaluations').columns(columns);
      return (whereNotNull ? builder.where(sql.ref(whereNotNull), 'is not', null) : builder).execute();
    };
    await index('account', ['account_id', 'id']);
    await index('email', ['account_id', 'email', 'id']);
    await index('email_domain', ['account_id', 'email_domain', 'id']);
    await index('ip', ['account_id', 'ip_key', 'id']);
    await index('user', ['account_id', 'user_id', 'id'], 'user_id');
    await index('device', ['account_id', 'device_hash', 'id'], 'device_hash');
  },
};
