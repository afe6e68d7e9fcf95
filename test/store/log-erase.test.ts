import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { SQLITE_LOG_ERASE } from '../../src/store/log-record.js';
import type { LogRecord } from '../../src/core/log-record.js';
import { ENGINES, freshDatabaseUrl, openTestStore, withSqlitePlans, type EngineName } from '../support/store.js';

/**
 * Erasing a person from the SQLite log (the writer thread's statements): it finds their evaluations
 * through the user and e-mail indexes, never by reading every row of the account, and it takes
 * exactly theirs, with their labels, review items and fired rules. And from a log turned off since
 * (RETENTION_DAYS=0), on both engines: what it kept goes the same way.
 */
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

let n = 0;
const record = (user: string | null, email: string): LogRecord => {
  n += 1;
  const id = `0193a1b2-c3d4-7e5f-8a6b-${n.toString(16).padStart(12, '0')}`;
  return {
    id, account_id: 'acme', event_type: 'account_register', email, email_domain: 'example.com', ip: '81.2.69.160', user_id: user, device_hash: null,
    state: 'review', fraud_score: 25, rule_set_version: 1, fired: ['ip_velocity'], unknown: [], request: `{"email":"${email}"}`, response: `{"id":"${id}"}`, shadow: null,
  };
};

describe('erasing a person from the SQLite log', () => {
  it('reads only their rows: the user and e-mail indexes, never a range of the whole account', async () => {
    await withSqlitePlans((plan) => {
      for (const [name, text] of Object.entries(SQLITE_LOG_ERASE)) {
        const lines = plan(text, { account: 'acme', user: 'u-1', email: 'ann@example.com' });
        const reads = lines.filter((line) => /\bevaluations\b/.test(line) && !line.includes('evaluation_rules'));
        expect(reads.length, `${name}: ${lines.join(' ; ')}`).toBeGreaterThan(0);
        for (const line of reads) {
          // Each read of the log is an index range on the person (or one row by its id), not the account's every row.
          expect(line, `${name}: ${lines.join(' ; ')}`).toMatch(/\((account_id=\? AND (user_id|email|id)=\?)\)$/);
        }
      }
    });
  });

  it('takes exactly the person\'s evaluations, by user, by e-mail or by both, with their labels, review items and fired rules', async () => {
    const store = await openTestStore('sqlite');
    opened.push(store);
    await store.engine.db.insertInto('accounts').values({ id: 'acme', name: 'Acme', status: 'active', env_keys: 0, created_at: 1 }).execute();
    const records = [
      record('u-1', 'ann@example.com'), record('u-1', 'other@example.com'), record(null, 'ann@example.com'),
      record('u-2', 'bob@example.com'), record('u-3', 'cat@example.com'), record(null, 'cat@example.com'), record('u-4', 'dan@example.com'),
    ];
    for (const r of records) store.log.record(r);
    await store.log.flush();
    await store.engine.db.insertInto('labels').values(records.map((r) => ({ account_id: 'acme', evaluation_id: r.id, label: 'fraud' as const, reason: null, author: 'test', created_at: 1 }))).execute();
    const left = async () => (await store.engine.db.selectFrom('evaluations').select('user_id').select('email').orderBy('id').execute()).map((r) => `${r.user_id}/${r.email}`);

    // By user and e-mail: the user's rows under any address, the address's rows under any user (or none).
    expect(await store.erase('acme', { userId: 'u-1', email: 'ann@example.com' }, { actor: 'test' })).toMatchObject({ evaluations: 3, labels: 3 });
    expect(await left()).toEqual(['u-2/bob@example.com', 'u-3/cat@example.com', 'null/cat@example.com', 'u-4/dan@example.com']);
    // By user alone, then by e-mail alone.
    expect(await store.erase('acme', { userId: 'u-2' }, { actor: 'test' })).toMatchObject({ evaluations: 1, labels: 1 });
    expect(await store.erase('acme', { email: 'cat@example.com' }, { actor: 'test' })).toMatchObject({ evaluations: 2, labels: 2 });
    expect(await left()).toEqual(['u-4/dan@example.com']);

    const kept = records.at(-1)!.id;
    const column = async (table: 'labels' | 'review_items' | 'evaluation_rules') => (await store.engine.db.selectFrom(table).select('evaluation_id').execute()).map((r) => r.evaluation_id);
    expect(await column('labels')).toEqual([kept]);
    expect(await column('review_items')).toEqual([kept]);
    expect(await column('evaluation_rules')).toEqual([kept]);
  });
});

describe.each(ENGINES)('erasing a person from a log turned off since, on %s', (engine: EngineName) => {
  it('takes their evaluations, labels and review items written before, and leaves the others\'', async () => {
    const url = await freshDatabaseUrl(engine);
    const before = await openTestStore({ url });
    const records = [record('u-1', 'ann@example.com'), record(null, 'ann@example.com'), record('u-2', 'bob@example.com')];
    try {
      await before.engine.db.insertInto('accounts').values({ id: 'acme', name: 'Acme', status: 'active', env_keys: 0, created_at: 1 }).execute();
      for (const r of records) before.log.record(r);
      await before.log.flush();
      await before.engine.db.insertInto('labels').values(records.map((r) => ({ account_id: 'acme', evaluation_id: r.id, label: 'legit' as const, reason: null, author: 'test', created_at: 1 }))).execute();
    } finally {
      await before.close();
    }

    const store = await openTestStore({ url }, { retentionDays: 0 });
    opened.push(store);
    expect(await store.erase('acme', { userId: 'u-1', email: 'ann@example.com' }, { actor: 'test' })).toMatchObject({ evaluations: 2, labels: 2 });
    const kept = records[2]!.id;
    expect((await store.engine.db.selectFrom('evaluations').select('id').execute()).map((r) => r.id)).toEqual([kept]);
    for (const table of ['labels', 'review_items', 'evaluation_rules'] as const) {
      expect((await store.engine.db.selectFrom(table).select('evaluation_id').execute()).map((r) => r.evaluation_id), table).toEqual([kept]);
    }
  });
});
