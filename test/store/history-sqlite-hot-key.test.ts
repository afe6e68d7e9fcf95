import { afterEach, describe, expect, it } from 'vitest';
import { historyEvent, type HistoryEvent } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import type { HistoryStore } from '../../src/history/store.js';
import { SQLITE_HISTORY_DEFAULTS } from '../../src/store/history-sqlite.js';
import { freshSqliteHistory } from '../support/store.js';

const PLACE = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };

/**
 * Regression: one person repeated slowed down as SQLite's history memory filled (the benchmark's
 * one-person mix fell from 2,965 to 1,574 req/s over five rounds). Every hit moved its identifier
 * to the newest end of a Map (a delete and a set), and the Map's chains of deleted slots made each
 * hit slower until the next rehash: 62 → 242 CPU µs per record() from 1,000 to 60,000 identifiers
 * held. A hit now only marks the identifier; the eviction pass moves it.
 */
describe('SQLite history: a hot identifier costs the same however many others are held', () => {
  let history: HistoryStore | undefined;
  afterEach(async () => {
    await history?.close();
    history = undefined;
  });

  it('times one person repeated with 1,000 and then 45,000 identifiers held', async () => {
    let now = Date.parse('2026-06-01T00:00:00Z');
    // Everything written back kept, up to the bound (the service keeps 16 MiB, ~12,000 identifiers):
    // the slowdown grew with the number held.
    ({ history } = await freshSqliteHistory({ onWriteError: (e) => { throw e; }, historyDays: 180, now: () => now, keepBytes: SQLITE_HISTORY_DEFAULTS.maxBytes }));
    const store = history;
    const hash = keyedHasher(Buffer.alloc(32, 7));
    const ip = hash('default', 'ip', '81.2.69.160');
    const person = (i: number): HistoryEvent => {
      const user = hash('default', 'user', `u${i}`);
      return historyEvent({ account: 'default', at: now, ip, email: hash('default', 'email', `user${i}@example.com`), identity: user, device: hash('default', 'device', `d${i}`), user, place: PLACE });
    };
    const hot = person(0);
    /**
     * Wall times of seven batches of hits, main thread only, sorted. Compared: the fastest with many
     * held against the median with few (a busy machine, a GC or the write-back only add time; and
     * with few held the fastest batch was sometimes half the others, 14.6 against 26 ms, which made
     * a fastest-against-fastest ratio flaky). The regression made every hit slower: the fastest
     * batch with many held was ~4 times the others then.
     */
    const hits = async () => {
      const times: number[] = [];
      for (let batch = 0; batch < 7; batch++) {
        const started = performance.now();
        for (let i = 0; i < 2_000; i++) {
          now += 1;
          await store.record(hot);
        }
        times.push(performance.now() - started);
      }
      return times.sort((a, b) => a - b);
    };
    const fill = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        now += 1;
        while ((await store.record(person(i))) === null) await new Promise((r) => setTimeout(r, 5));
      }
    };
    await fill(1, 333);
    const few = (await hits())[3]!;
    await fill(333, 15_000);
    // Held, not waiting to be written: hits alone give the write-back no turn of the event loop,
    // and the eviction cursor would walk identifiers it cannot evict yet on every hit.
    while ((store.stats().pending ?? 0) > 0) await new Promise((r) => setTimeout(r, 5));
    const many = (await hits())[0]!;
    console.info(`hot key: ${few.toFixed(1)} ms per 2,000 hits with 1,000 identifiers held (median), ${many.toFixed(1)} ms with ${store.stats().cached} (fastest)`);
    expect(store.stats().cached).toBeGreaterThan(40_000);
    // Before the fix: about four times slower at this size.
    expect(many).toBeLessThan(few * 2);
  }, 60_000);
});
