import Sqlite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { firstIdAt, recordSize } from '../../src/store/log-record.js';
import { type LogRecord } from '../../src/core/log-record.js';
import { openTestStore } from '../support/store.js';

/**
 * The evaluation log's queue when the store cannot keep up: bounded in entries and in bytes,
 * what does not fit is dropped and counted, and nothing ever waits for it.
 */
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

let n = 0;
const record = (responseBytes = 1000): LogRecord => {
  n += 1;
  const id = `${firstIdAt(Date.now()).slice(0, 14)}7${(n % 4096).toString(16).padStart(3, '0')}-8000-${String(n).padStart(12, '0')}`;
  return {
    id, account_id: 'acme', event_type: 'account_register', email: `u${n}@example.com`, email_domain: 'example.com', ip: '203.0.113.7',
    user_id: null, device_hash: null, state: 'approve', fraud_score: 0, rule_set_version: null, fired: [], request: '{}', response: 'x'.repeat(responseBytes), shadow: null,
  };
};

describe('the evaluation log queue', () => {
  it('drops and counts past its entry bound while the store is unavailable, and writes what it kept once it is back', async () => {
    store = await openTestStore('sqlite', { logQueue: { maxEntries: 100 } });
    store.health.down(new Error('test: the store went away'));
    const started = performance.now();
    for (let i = 0; i < 1_000; i++) store.log.record(record());
    // Never waits: 1,000 records handed over in far less than one write would take.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(store.log.stats()).toMatchObject({ queued: 100, dropped: 900, written: 0 });

    store.health.up();
    await expect.poll(() => store!.log.stats().written, { timeout: 10_000, interval: 20 }).toBe(100);
    expect(store.log.stats()).toMatchObject({ queued: 0, queued_bytes: 0, dropped: 900, failed: 0 });
  });

  it('holds at most its byte bound, whatever the size of each record', async () => {
    const maxBytes = 64 * 1024;
    store = await openTestStore('sqlite', { logQueue: { maxEntries: 100_000, maxBytes } });
    store.health.down(new Error('test: the store went away'));
    for (let i = 0; i < 200; i++) store.log.record(record(4_000));
    const { queued, queued_bytes, dropped } = store.log.stats();
    expect(queued_bytes).toBeLessThanOrEqual(maxBytes);
    expect(queued).toBe(Math.floor(maxBytes / recordSize(record(4_000))));
    expect(dropped).toBe(200 - queued);
  });

  it('keeps answering while another process holds the SQLite write lock, and catches up when it lets go', async () => {
    store = await openTestStore('sqlite', { logQueue: { maxEntries: 50 } });
    const path = (store.engine.database as { path: string }).path;
    // Another process (a backup, an operator's sqlite3 shell) holds the write lock.
    const other = new Sqlite(path);
    other.exec('begin immediate');
    for (let i = 0; i < 20; i++) store.log.record(record());
    // The batch goes to the writer thread, which waits for the lock; this thread does not.
    const writing = store.log.flush();
    const started = performance.now();
    for (let i = 0; i < 200; i++) store.log.record(record());
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(store.log.stats()).toMatchObject({ queued: 50, dropped: 150, written: 0 });
    other.exec('commit');
    other.close();
    await writing;
    await store.log.flush();
    expect(store.log.stats()).toMatchObject({ queued: 0, written: 70, dropped: 150, failed: 0 });
  });
});
