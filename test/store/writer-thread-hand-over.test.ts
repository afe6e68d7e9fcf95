import Sqlite from 'better-sqlite3';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/core/log-record.js';
import { openSqliteWriterThread, sqliteLogWriter } from '../../src/store/sqlite-log-writer.js';
import { database, freshDatabaseUrl, openTestStore } from '../support/store.js';

// A collection on demand, to see what the main thread still holds.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const record = (i: number): LogRecord => ({
  id: `019ac8f0-0000-7000-8000-${String(i).padStart(12, '0')}`,
  account_id: 'default', event_type: 'registration', email: `person.${i}@example.com`, email_domain: 'example.com', ip: '203.0.113.7',
  user_id: `u${i}`, device_hash: null, state: 'approve', fraud_score: 5, rule_set_version: 1, fired: [], unknown: [],
  request: JSON.stringify({ email: `person.${i}@example.com` }), response: 'x'.repeat(2_000), shadow: null,
});

const closing: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

describe('the SQLite writer thread: what the main thread hands it', () => {
  it('keeps no log record once sent, while the thread has not yet answered (they would be copied into the old generation)', async () => {
    const url = await freshDatabaseUrl('sqlite');
    await (await openTestStore({ url })).close(); // migrated
    const db = database(url);
    if (db.engine !== 'sqlite') throw new Error('a SQLite url');
    const thread = await openSqliteWriterThread(db, 1);
    const writer = sqliteLogWriter(thread);
    closing.push(() => writer.close());
    // The write lock held elsewhere: the thread cannot answer until it is let go.
    const other = new Sqlite(db.path);
    closing.push(() => other.close());
    other.prepare('begin immediate').run();

    const sent = (() => {
      const records = [record(1), record(2)];
      return { first: new WeakRef(records[0]!), written: writer.write(records) };
    })();
    // Past the job that made the WeakRef (which keeps its target until the job ends), then collected.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(sent.first.deref()).toBeUndefined();

    other.prepare('commit').run();
    await sent.written;
    expect(other.prepare('select count(*) from evaluations').pluck().get()).toBe(2);
  });
});
