import Sqlite from 'better-sqlite3';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { historyEvent } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import type { Place } from '../../src/history/place.js';
import type { HistoryStore } from '../../src/history/store.js';
import { historyLossReport } from '../../src/store/history-losses.js';
import { freshSqliteHistory } from '../support/store.js';

/**
 * The store's minute line while behaviour history loses changes: SQLite's history with a small
 * bound and its writer stalled (another connection holds the write lock), so new people fill what
 * waits to be written and the next events are refused.
 */
const PLACE: Place = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };

let history: HistoryStore | undefined;
let locker: Sqlite.Database | undefined;
afterEach(async () => {
  if (locker?.inTransaction) locker.prepare('rollback').run();
  locker?.close();
  await history?.close();
  history = locker = undefined;
});

describe('history losses in the log', () => {
  it('says once a call how many events went unrecorded since the last line, and nothing while none did', async () => {
    const at = Date.parse('2026-06-01T12:00:00Z');
    const fresh = await freshSqliteHistory({ historyDays: 30, now: () => at, flushDelayMs: 1, maxEntries: 30, onWriteError: () => undefined });
    history = fresh.history;
    const hash = keyedHasher(Buffer.alloc(32, 7));
    const ip = hash('acme', 'ip', '81.2.69.160');
    const person = (i: number) => {
      const user = hash('acme', 'user', `u${i}`);
      return historyEvent({ account: 'acme', at, ip, email: hash('acme', 'email', `user${i}@example.com`), identity: user, device: hash('acme', 'device', `d${i}`), user, place: PLACE });
    };
    const lines: Array<Record<string, unknown>> = [];
    const report = historyLossReport(() => history!.stats(), pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }));

    report();
    expect(lines).toEqual([]);

    locker = new Sqlite(fresh.path);
    locker.prepare('begin immediate').run();
    // One address and three identifiers a person: past 30 held, every event is refused.
    const recorded = (from: number, to: number) => {
      let refused = 0;
      for (let i = from; i < to; i++) if (history!.record(person(i)) === null) refused += 1;
      return refused;
    };
    const first = recorded(0, 20);
    expect(first).toBeGreaterThan(0);
    report();
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'behaviour history: changes not kept', refused: first, failed: 0, pending: history.stats().pending })]);
    expect(history.stats().pending).toBeGreaterThanOrEqual(30);

    report();
    expect(lines).toHaveLength(1);

    const second = recorded(20, 25);
    expect(second).toBe(5);
    report();
    expect(lines.at(-1)).toMatchObject({ refused: 5, failed: 0 });
    expect(lines).toHaveLength(2);
  });
});
