import { pino } from 'pino';
import { sql, type Insertable } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { migrate } from '../../src/store/migrate.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { LOG_COLUMNS, logColumns } from '../../src/store/log-record.js';
import type { LogRecord } from '../../src/core/log-record.js';
import type { Database } from '../../src/store/schema.js';
import { engineAtVersion, ENGINES, type EngineName } from '../support/store.js';
import { packedRows } from '../support/history-rows.js';

/**
 * Migration 16 on a store whose rows were written by version 15's schema: the log's rows read back
 * with the ids they had, erasure still finds the person's, history members are kept, and the index
 * dropped on SQLite (only PostgreSQL's reads use it) is still there on PostgreSQL.
 */
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

const record = (id: string, user: string, email: string): LogRecord => ({
  id, account_id: 'acme', event_type: 'account_register', email, email_domain: 'example.com', ip: '81.2.69.160', user_id: user, device_hash: 'ab'.repeat(32),
  state: 'review', fraud_score: 25, rule_set_version: 1, fired: ['ip_velocity'], unknown: [], request: `{"email":"${email}"}`, response: `{"id":"${id}"}`, shadow: null,
});

describe.each(ENGINES)('migration 16 on %s', (engine: EngineName) => {
  it('keeps what version 15 wrote: evaluations by id, their rules and review items, history members, erasure', async () => {
    const { old, db } = await engineAtVersion(engine, 15);
    try {
      await old.db.insertInto('accounts').values({ id: 'acme', name: 'Acme', status: 'active', env_keys: 0, created_at: 1 }).execute();
      const ids = ['0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b', '0193a1b2-c3d5-7e5f-8a6b-7c8d9e0f1a2c', '0193a1b2-c3d6-7e5f-8a6b-7c8d9e0f1a2d'];
      const records = [record(ids[0]!, 'u-1', 'ann@example.com'), record(ids[1]!, 'u-1', 'ann@example.com'), record(ids[2]!, 'u-2', 'bob@example.com')];
      for (const r of records) {
        // Written as version 15's writer wrote them: its columns, derived by its code.
        const columns = logColumns(r);
        const at = columns[2] as number;
        const row = Object.fromEntries(LOG_COLUMNS.map((c, i) => [c, columns[i]])) as unknown as Insertable<Database['evaluations']>;
        await old.db.insertInto('evaluations').values(row).execute();
        await old.db.insertInto('evaluation_rules').values({ account_id: 'acme', rule_id: 'ip_velocity', evaluation_id: r.id }).execute();
        await old.db.insertInto('review_items').values({ account_id: 'acme', evaluation_id: r.id, event_type: r.event_type, user_id: r.user_id, email: r.email, opened_at: at, status: 'open' }).execute();
      }
      const key = Buffer.alloc(16, 7);
      await old.db.insertInto('history_members').values({ account_id: 'acme', key, kind: 'a', member: Buffer.alloc(16, 8), last_seen: 5 }).execute();
      if (old.kind === 'sqlite') {
        // Migration 16 alone, before 17 moves SQLite's history into one table: the index goes.
        expect((await migrate(old, MIGRATIONS.filter((m) => m.version <= 16))).to).toBe(16);
        const indexes = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'history_members'`.execute(old.db);
        expect(indexes.rows.map((r) => r.name)).not.toContain('history_members_recent');
        expect(indexes.rows.length).toBeGreaterThan(0); // the table's other indexes are still there
      }
    } finally {
      await old.close();
    }

    const store = await openStore({ database: db, logger: pino({ level: 'silent' }), retentionDays: 36_500, writeLog: true });
    opened.push(store);
    expect(store.migration.applied).toEqual(MIGRATIONS.filter((m) => m.version > (engine === 'sqlite' ? 16 : 15)).map((m) => `${m.version} ${m.name}`));

    const first = await store.decisions.get('acme', '0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b');
    expect(first).toMatchObject({ id: '0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b', state: 'review', rules: ['ip_velocity'], previous_of_user: null });
    expect((await store.decisions.get('acme', '0193a1b2-c3d5-7e5f-8a6b-7c8d9e0f1a2c'))?.previous_of_user).toBe('0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b');
    // SQLite's are one row an identifier since migration 19 (test/store/migration-0019.test.ts).
    const members = store.engine.kind === 'sqlite'
      ? [...(await packedRows(store)).find((r) => r.key.equals(Buffer.alloc(16, 7)))!.members].map(([m, seen]) => [m[0], seen])
      : (await store.engine.db.selectFrom('history_members').select(['kind', 'last_seen']).where('account_id', '=', 'acme').where('key', '=', Buffer.alloc(16, 7)).execute()).map((m) => [m.kind, Number(m.last_seen)]);
    expect(members).toEqual([['a', 5]]);
    // PostgreSQL keeps the index it reads; SQLite's table is gone since migration 17, its indexes with
    // it (that migration 16 dropped this one on SQLite is checked before 17 runs, above).
    if (store.engine.kind === 'postgres') {
      const indexes = await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'history_members'`.execute(store.engine.db);
      expect(indexes.rows.map((r) => r.name)).toContain('history_members_recent');
    } else {
      const tables = await sql<{ name: string }>`select name from sqlite_master where name like 'history_members%'`.execute(store.engine.db);
      expect(tables.rows).toEqual([]);
    }

    // Erasure finds the person's evaluations written before the upgrade, and only theirs.
    const erased = await store.erase('acme', { userId: 'u-1' }, { actor: 'test' });
    expect(erased.evaluations).toBe(2);
    expect(await store.decisions.get('acme', '0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b')).toBeUndefined();
    expect((await store.decisions.get('acme', '0193a1b2-c3d6-7e5f-8a6b-7c8d9e0f1a2d'))?.id).toBe('0193a1b2-c3d6-7e5f-8a6b-7c8d9e0f1a2d');
    const open = await store.engine.db.selectFrom('review_items').select('evaluation_id').where('account_id', '=', 'acme').execute();
    expect(open.map((r) => r.evaluation_id)).toEqual(['0193a1b2-c3d6-7e5f-8a6b-7c8d9e0f1a2d']);
  });
});
