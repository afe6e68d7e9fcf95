import { afterEach, describe, expect, it } from 'vitest';
import { historyEvent } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import type { Place } from '../../src/history/place.js';
import type { HistoryStore } from '../../src/history/store.js';
import { sqliteHistory } from '../../src/store/history-sqlite.js';
import { openSqliteWriterThread, type SqliteWriterThread } from '../../src/store/sqlite-log-writer.js';
import { freshSqliteFile } from '../support/store.js';

/**
 * SQLite history: an identifier first met while it is being erased. Its event is answered as a
 * first one and written after the erasure; the key filter must then know the key, or once memory
 * has let it go the next event reads it as never seen (the filter says "not in the file") and
 * loses what the file holds. The erasure is held open at the writer thread, as a slow one would be.
 */
const PLACE: Place = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };

let history: HistoryStore | undefined;
afterEach(async () => {
  await history?.close();
  history = undefined;
});

describe('SQLite history: a key met while it is erased', () => {
  it('is in the key filter once written: evicted from memory, its next event reads it back from the file', async () => {
    const db = await freshSqliteFile();
    const real = await openSqliteWriterThread(db, 1);
    let started!: () => void;
    const erasing = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const thread: SqliteWriterThread = {
      async send(request, transfer) {
        if (request.type === 'history-erase') {
          started();
          await held;
        }
        return real.send(request, transfer);
      },
      release: () => real.release(),
    };
    const clock = { now: Date.parse('2026-06-01T12:00:00Z') };
    // keepBytes 1: memory keeps nothing once it is written back (every pass evicts what it may).
    history = sqliteHistory({ path: db.path, thread, historyDays: 30, now: () => clock.now, flushDelayMs: 1, keepBytes: 1, onWriteError: (error) => { throw error; } });
    const hash = keyedHasher(Buffer.alloc(32, 7));
    const email = hash('acme', 'email', 'new@example.com');
    const event = () => historyEvent({ account: 'acme', at: clock.now, ip: hash('acme', 'ip', '81.2.69.160'), email, identity: email, device: null, user: null, place: PLACE });

    // The person was never seen: erasing them finds nothing, but it is under way.
    const erased = history.erase('acme', [email]);
    await erasing;
    const during = clock.now;
    expect((await history.record(event()))!.email.firstSeen).toBeNull();
    release();
    expect(await erased).toEqual({ identifiers: 0, counters: 0, memberships: 0 });

    // Written back after the erasure (prune waits for every write-back), then let go by memory.
    await history.prune();
    expect(history.stats().cached).toBe(0);

    clock.now += 60_000;
    const again = (await history.record(event()))!;
    expect(again.email.firstSeen).toBe(during);
    expect(again.email.hours).toBe(1);
  });
});
