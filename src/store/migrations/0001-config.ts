import { sql } from 'kysely';
import { types, type Migration } from './types.js';

/** Accounts, their keys, rule set versions, the audit log and the change counter replicas poll. */
export const configTables: Migration = {
  version: 1,
  name: 'accounts, keys, rule set versions, audit log',
  async up(db, engine) {
    const { time, json } = types(engine);

    await db.schema.createTable('settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();

    await db.schema.createTable('store_revision')
      .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
      .addColumn('revision', time, (c) => c.notNull())
      .execute();
    await db.insertInto('store_revision').values({ id: 1, revision: 0 }).execute();

    await db.schema.createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
      .addColumn('env_keys', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', time, (c) => c.notNull())
      .execute();

    await db.schema.createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text')
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('last_used_at', time)
      .addColumn('revoked_at', time)
      .execute();
    await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();

    await db.schema.createTable('rule_set_versions')
      .addColumn('id', 'integer', (c) => (engine === 'postgres' ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement()))
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('draft', 'published', 'archived')`))
      .addColumn('yaml', 'text', (c) => c.notNull())
      .addColumn('author', 'text', (c) => c.notNull())
      .addColumn('comment', 'text')
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('published_at', time)
      .addUniqueConstraint('rule_set_versions_number', ['account_id', 'event_type', 'version'])
      .execute();
    // At most one live and one draft version per account and event type, enforced by the database
    // itself: two publishes racing on two replicas cannot both win.
    await db.schema.createIndex('rule_set_versions_one_published').on('rule_set_versions').columns(['account_id', 'event_type'])
      .unique().where(sql.ref('status'), '=', 'published').execute();
    await db.schema.createIndex('rule_set_versions_one_draft').on('rule_set_versions').columns(['account_id', 'event_type'])
      .unique().where(sql.ref('status'), '=', 'draft').execute();

    await db.schema.createTable('audit_log')
      .addColumn('id', engine === 'postgres' ? 'bigint' : 'integer', (c) => (engine === 'postgres' ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement()))
      .addColumn('at', time, (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text')
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target', 'text')
      .addColumn('before', json)
      .addColumn('after', json)
      .execute();
    await db.schema.createIndex('audit_log_account').on('audit_log').columns(['account_id', 'id']).execute();
  },
};
