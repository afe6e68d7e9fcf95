import Sqlite from 'better-sqlite3';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { historyEvent } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import type { Place } from '../../src/history/place.js';
import { createHistoryRecorder } from '../../src/history/recorder.js';
import type { HistoryStore } from '../../src/history/store.js';
import { parseEmail } from '../../src/email/address.js';
import { parseIp } from '../../src/ip/address.js';
import { historyLossReport } from '../../src/store/history-losses.js';
import { freshSqliteHistory } from '../support/store.js';

/**
 * SQLite's history memory while the writer thread is stalled (another connection holds the write
 * lock: a backup, a CLI): identifiers waiting to be written cannot be evicted, so past the bound an
 * event is not recorded and the evaluation answers from this replica's own counts (partial), until the writer catches up.
 */
const NOWHERE: Place = { country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: false };
const MAX_ENTRIES = 8;

let history: HistoryStore | undefined;
let locker: Sqlite.Database | undefined;
afterEach(async () => {
  if (locker?.inTransaction) locker.prepare('rollback').run();
  locker?.close();
  await history?.close();
  history = locker = undefined;
});

describe('SQLite history with its writer stalled', () => {
  it('stops recording past its bound instead of growing, answers from local counts, and records again once written', async () => {
    const writeErrors: Error[] = [];
    const now = Date.parse('2026-06-01T12:00:00Z');
    const fresh = await freshSqliteHistory({ onWriteError: (e) => writeErrors.push(e), historyDays: 30, now: () => now, maxEntries: MAX_ENTRIES, flushDelayMs: 1 });
    history = fresh.history;
    const store = history;
    const hash = keyedHasher(Buffer.alloc(32, 7));
    const event = (i: number) => {
      const email = hash('acme', 'email', `user${i}@example.com`);
      return historyEvent({ account: 'acme', at: now, ip: hash('acme', 'ip', `203.0.113.${i}`), email, identity: email, device: null, user: null, place: NOWHERE });
    };

    locker = new Sqlite(fresh.path);
    locker.prepare('begin immediate').run();
    const answers = [];
    for (let i = 0; i < 20; i++) {
      answers.push(store.record(event(i)));
      // Let the write-back start (and wait on the lock), as it would between requests.
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Two identifiers an event: recorded until the unwritten ones fill the bound, then refused.
    const recorded = answers.filter((a) => a !== null).length;
    expect(recorded).toBe(MAX_ENTRIES / 2 + 1);
    expect(answers.slice(recorded).every((a) => a === null)).toBe(true);
    const stalled = store.stats();
    expect(stalled).toMatchObject({ cached: MAX_ENTRIES + 2, refused: 20 - recorded });
    // The store's minute line says so (src/store/history-losses.ts), and then only what is new.
    const lines: Array<Record<string, unknown>> = [];
    const report = historyLossReport(() => store.stats(), pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }));
    report();
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'behaviour history: changes not kept', refused: 20 - recorded, failed: 0, pending: stalled.pending })]);
    report();
    expect(lines).toHaveLength(1);
    expect(store.record(event(99))).toBeNull();
    expect(store.stats().cached).toBe(MAX_ENTRIES + 2);
    report();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ refused: 1, failed: 0 });

    // Through the evaluation's step: this replica's own counts, partial (lower bounds, what only the
    // store knows null), and the store is not reported down for it.
    const errors: Error[] = [];
    const step = createHistoryRecorder({ store, hash, available: () => true, timeoutMs: 1_000, onError: (e) => errors.push(e) });
    const request = { parsedEmail: parseEmail('someone@example.com'), parsedIp: parseIp('198.51.100.1') };
    const ip = { country_code: null, latitude: null, longitude: null, accuracy_radius_km: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_datacenter: false };
    step('acme', request as never, ip as never, now);
    expect(step('acme', request as never, ip as never, now)).toEqual({
      facts: {
        ip: { events_1h: 2, events_24h: 2, accounts_24h: null },
        email: { events_24h: 2, devices_30d: null, first_seen: null },
        device: null,
        user: null,
        at_least: ['ip.events_1h', 'ip.events_24h', 'email.events_24h'],
        partial: true,
      },
    });
    expect(errors).toEqual([]);

    locker.prepare('rollback').run();
    await expect.poll(() => store.stats().pending, { timeout: 10_000, interval: 10 }).toBe(0);
    await expect.poll(() => store.record(event(100)), { timeout: 10_000, interval: 10 }).not.toBeNull();
    expect(store.stats().cached).toBeLessThanOrEqual(MAX_ENTRIES + 2);
    expect(writeErrors).toEqual([]);
  });
});

describe('a history store that answers at once', () => {
  it('has its error reported and the evaluation answered from this replica\'s counts, with no promise and no timer', () => {
    const hash = keyedHasher(Buffer.alloc(32, 7));
    // A fake only for the failure (the disk refusing the read); the recorder is the real one.
    const store = { synchronous: true, record: () => { throw new Error('SQLITE_IOERR: disk I/O error'); }, countAfter: () => undefined } as unknown as HistoryStore;
    const errors: Error[] = [];
    const step = createHistoryRecorder({ store, hash, available: () => true, timeoutMs: 1_000, onError: (e) => errors.push(e) });
    const request = { parsedEmail: parseEmail('someone@example.com'), parsedIp: parseIp('198.51.100.1') };
    const ip = { country_code: null, latitude: null, longitude: null, accuracy_radius_km: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_datacenter: false };
    const answer = step('acme', request as never, ip as never, Date.parse('2026-06-01T12:00:00Z'));
    expect(answer).not.toBeInstanceOf(Promise);
    expect(answer).toMatchObject({ facts: { ip: { events_1h: 1 }, partial: true } });
    expect(errors.map((e) => e.message)).toEqual(['SQLITE_IOERR: disk I/O error']);
  });
});
