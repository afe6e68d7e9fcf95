import { afterEach, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/history/caps.js';
import { historyEvent } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import type { Place } from '../../src/history/place.js';
import type { HistoryStore } from '../../src/history/store.js';
import { pruneBounds } from '../../src/store/history-maintenance.js';
import { sqliteHistory } from '../../src/store/history-sqlite.js';
import { openSqliteWriterThread } from '../../src/store/sqlite-log-writer.js';
import { freshSqliteFile } from '../support/store.js';

/**
 * SQLite history: what is past HISTORY_DAYS stays gone. A write-back sends all that an identifier
 * holds (history-sqlite.ts `takeBatch`), and memory's prune passes over identifiers waiting to be
 * written, so an address touched again holds a member the file's prune has just taken: written
 * back, it would come back to the file, with its reverse entry, until the next prune.
 */
const PLACE: Place = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };
const HISTORY_DAYS = 2;

let history: HistoryStore | undefined;
afterEach(async () => {
  await history?.close();
  history = undefined;
});

describe('SQLite history: a member past HISTORY_DAYS', () => {
  it('is not written back once the file has pruned it, though memory still held it', async () => {
    const db = await freshSqliteFile();
    const thread = await openSqliteWriterThread(db, 1);
    const clock = { now: Date.parse('2026-06-01T12:00:00Z') };
    const options = { path: db.path, thread, historyDays: HISTORY_DAYS, now: () => clock.now, flushDelayMs: 1, onWriteError: (error: Error) => { throw error; } };
    history = sqliteHistory(options);
    const hash = keyedHasher(Buffer.alloc(32, 7));
    const ip = hash('acme', 'ip', '81.2.69.160');
    const event = (who: string) => {
      const email = hash('acme', 'email', `${who}@example.com`);
      return historyEvent({ account: 'acme', at: clock.now, ip, email, identity: email, device: null, user: null, place: PLACE });
    };

    await history.record(event('old'));
    await history.prune(); // written back (nothing is old yet)
    clock.now += (HISTORY_DAYS + 1) * DAY_MS;
    // The address touched again: memory holds it, dirty, with the old member in its set.
    await history.record(event('new'));
    // The file's prune, as memory's would run it, while the address waits to be written.
    const b = pruneBounds(clock.now, HISTORY_DAYS);
    const pruned = await thread.send({ type: 'history-prune-packed', before: b.before, minute: b.minute, hour: b.hour, limit: 100 });
    expect(pruned.count).toBeGreaterThan(0);
    // The address written back (close writes what memory holds; it prunes nothing).
    await history.close();

    // Read from the file alone: another store on it, no memory of its own.
    history = sqliteHistory({ ...options, thread: await openSqliteWriterThread(db, 1) });
    clock.now += 60_000;
    const again = (await history.record(event('old')))!;
    expect(again.email.firstSeen).toBeNull();
    expect(again.ip.accounts.current).toBeNull();
  });

  it('keeps each kind of a user\'s sets apart as one ages out: the countries gone, the devices kept', async () => {
    const db = await freshSqliteFile();
    const clock = { now: Date.parse('2026-06-01T12:00:00Z') };
    const start = clock.now;
    history = sqliteHistory({ path: db.path, thread: await openSqliteWriterThread(db, 1), historyDays: 7, now: () => clock.now, flushDelayMs: 1, onWriteError: (error) => { throw error; } });
    const hash = keyedHasher(Buffer.alloc(32, 7));
    const user = hash('acme', 'user', 'u1');
    const event = (country: string | null) => historyEvent({
      account: 'acme', at: clock.now, ip: hash('acme', 'ip', '81.2.69.160'), email: user, identity: user, device: hash('acme', 'device', 'd1'), user, place: { ...PLACE, country },
    });

    await history.record(event('GB'));
    clock.now += 6 * DAY_MS;
    // The user holds a device and a country: each kind counted apart.
    const sixth = (await history.record(event(null)))!.user!;
    expect(sixth).toMatchObject({ devices: { count: 1, current: start }, countries: { count: 0, current: null }, baseline: { devices: true, countries: true } });

    clock.now += 2 * DAY_MS;
    await history.prune(); // HISTORY_DAYS 7: the country (day 0) goes, the device (day 6) stays
    const eighth = (await history.record(event('FR')))!.user!;
    expect(eighth).toMatchObject({ devices: { count: 1, current: start + 6 * DAY_MS }, countries: { count: 0, current: null }, baseline: { devices: true, countries: false } });
  });
});
