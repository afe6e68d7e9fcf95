import { sql } from 'kysely';
import { types, type Migration } from './types.js';

/**
 * Who may use the admin API (PRODUCT.md "Admin API and console"): console users, their roles per
 * account, their sessions, admin tokens for automation, and the login throttle's counters. Secrets
 * are stored only as hashes: passwords as scrypt, session ids and tokens as SHA-256 (both are 256
 * random bits, where a slow hash buys nothing).
 */
export const consoleUsers: Migration = {
  version: 5,
  name: 'console users, memberships, sessions, admin tokens, login throttle',
  async up(db, engine) {
    const { time } = types(engine);

    await db.schema.createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // Lower-cased: one person, one row, whatever case they type at login.
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      // 1 for a one-time password (`npm run admin -- create`): nothing but changing it is allowed.
      .addColumn('password_change_required', 'integer', (c) => c.notNull().check(sql`password_change_required in (0, 1)`))
      .addColumn('owner', 'integer', (c) => c.notNull().check(sql`owner in (0, 1)`))
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .execute();

    await db.schema.createTable('memberships')
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'analyst')`))
      .addColumn('created_at', time, (c) => c.notNull())
      .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'account_id'])
      .execute();
    await db.schema.createIndex('memberships_account').on('memberships').columns(['account_id', 'user_id']).execute();

    await db.schema.createTable('sessions')
      // SHA-256 of the session id the cookie carries: a copy of the table opens no session.
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('last_seen_at', time, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id']).execute();
    await db.schema.createIndex('sessions_last_seen').on('sessions').columns(['last_seen_at']).execute();

    await db.schema.createTable('admin_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      // Null with role `owner`: an instance-wide token; otherwise the one account it acts on.
      .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
      .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'analyst')`))
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('expires_at', time)
      .addColumn('last_used_at', time)
      .addColumn('revoked_at', time)
      .addCheckConstraint('admin_tokens_scope', sql`(role = 'owner') = (account_id is null)`)
      .execute();
    await db.schema.createIndex('admin_tokens_account').on('admin_tokens').columns(['account_id', 'created_at']).execute();

    await db.schema.createTable('login_throttle')
      // `user:<sha256 of the address>` or `ip:<address or IPv6 /64>`: no readable e-mail address.
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('window_started_at', time, (c) => c.notNull())
      .execute();
  },
};
