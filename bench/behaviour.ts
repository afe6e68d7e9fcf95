/**
 * Behaviour history's own figures, for `npm run bench` (bench/run.ts calls these): what one
 * read-and-record costs in-process as the history grows (a hot key and 1,000,000 distinct keys,
 * side by side), and the storage a million evaluations take, on each engine. Everything on 127.0.0.1.
 */
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { pino } from 'pino';
import { SET_KEEP } from '../src/history/caps.js';
import { historyFacts } from '../src/history/compute.js';
import { historyEvent } from '../src/history/event.js';
import type { Place } from '../src/history/place.js';
import { openStore, type Store } from '../src/store/index.js';
import { parseDatabaseUrl } from '../src/config/store-url.js';
import { seedHistory } from '../test/support/history-rows.js';

export interface HistoryFigures {
  engine: string;
  evaluations: number;
  /** µs per record() with every event on one IP, e-mail, device and user. */
  hot_us: { mean: number; p99: number };
  /** µs per record() with every identifier new, measured at the start and after `evaluations` distinct ones. */
  distinct_first_us: { mean: number; p99: number };
  distinct_last_us: { mean: number; p99: number };
  /** SQLite: events not recorded because the writer thread was behind (not in the storage figure). */
  refused: number;
  /**
   * Of the timed samples (first, last, hot), those refused: left out of their µs figures (a refusal
   * answers in well under a microsecond, and once read as the cost of a hot key's record()).
   */
  refused_timed: { first: number; last: number; hot: number };
  /** Bytes the history tables took per million evaluations of distinct identifiers. */
  mb_per_million: number;
}

const PLACE: Place = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };
const SAMPLE = 2_000;

const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 10) / 10;
  return { mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length), p99: round(sorted[Math.floor(sorted.length * 0.99)]!) };
};

async function sizeOf(store: Store): Promise<number> {
  if (store.engine.kind === 'sqlite') {
    const path = (store.engine.database as { path: string }).path;
    await sql`pragma wal_checkpoint(truncate)`.execute(store.engine.db).catch(() => undefined);
    return statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
  }
  const r = await sql<{ size: number }>`select sum(pg_total_relation_size(t))::bigint as size from unnest(array['history_keys', 'history_counts', 'history_members']) t`.execute(store.engine.db);
  return Number(r.rows[0]!.size);
}

export async function benchHistory(url: string, evaluations: number): Promise<HistoryFigures> {
  const parsed = parseDatabaseUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  let now = Date.parse('2026-06-01T00:00:00Z');
  const store = await openStore({ database: parsed, logger: pino({ level: 'warn' }), retentionDays: 0, historyDays: 180, writeLog: true, now: () => now });
  try {
    const history = store.history!;
    const hash = store.hashIdentifier;
    const distinct = (i: number) => {
      const email = hash('acme', 'email', `user${i}@example.com`);
      return historyEvent({
        account: 'acme', at: now, ip: hash('acme', 'ip', `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`), email, identity: hash('acme', 'user', `u${i}`),
        device: hash('acme', 'device', `d${i}`), user: hash('acme', 'user', `u${i}`), place: PLACE,
      });
    };
    const timed = async (make: (i: number) => ReturnType<typeof distinct>, from: number, count: number) => {
      const samples: number[] = [];
      let refused = 0;
      for (let i = from; i < from + count; i++) {
        now += 7;
        const event = make(i);
        const started = performance.now();
        // null: not recorded, the writer thread behind (counted in the store's `refused`), and not a sample.
        const prior = await history.record(event);
        if (prior === null) {
          refused += 1;
          continue;
        }
        historyFacts(prior, event);
        samples.push((performance.now() - started) * 1000);
      }
      return { samples, refused };
    };
    const before = await sizeOf(store);
    const first = await timed(distinct, 0, SAMPLE);
    // The bulk, not timed one by one: PostgreSQL in parallel (as a service would), SQLite as it comes.
    const parallel = store.engine.kind === 'postgres' ? 8 : 1;
    for (let i = SAMPLE; i < evaluations - SAMPLE; i += parallel) {
      now += 7;
      // SQLite refuses an event while its writer thread is behind: waited for, so the history really holds them all.
      const recorded = await Promise.all(Array.from({ length: Math.min(parallel, evaluations - SAMPLE - i) }, (_, k) => history.record(distinct(i + k))));
      if (recorded.includes(null)) {
        await new Promise((r) => setTimeout(r, 20));
        i -= parallel;
      }
      if (i % 100_000 < parallel) console.error(`history ${store.engine.kind}: ${i} of ${evaluations}`);
    }
    const last = await timed(distinct, evaluations - SAMPLE, SAMPLE);
    // One identifier set for every event: what a busy NAT address and its regulars cost.
    const hot = await timed(() => distinct(0), 0, SAMPLE);
    const refused = history.stats().refused ?? 0;
    await store.close();
    // Reopened, so SQLite's memory is written back and the file checkpointed before it is measured.
    const reopened = await openStore({ database: parsed, logger: pino({ level: 'warn' }), retentionDays: 0, writeLog: false });
    const size = await sizeOf(reopened).finally(() => reopened.close());
    return {
      engine: store.engine.kind, evaluations,
      hot_us: stats(hot.samples), distinct_first_us: stats(first.samples), distinct_last_us: stats(last.samples), refused,
      refused_timed: { first: first.refused, last: last.refused, hot: hot.refused },
      mb_per_million: Math.round(((size - before) / (evaluations + SAMPLE)) * 1e6 / 2 ** 20),
    };
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
}

export interface KeyCostFigures {
  engine: string;
  /** Events the hot IP holds in its windows. */
  events: number;
  /** µs per record() of a new person from that IP (mean / p99). */
  record_us: { mean: number; p99: number };
}

/**
 * Issue 30: what one read-and-record costs for a key that holds `events` events in its windows
 * (an account farm's IP), on each engine. The key is given its state directly in the tables as the
 * store keeps it after that many events of distinct accounts (its counters over 60 minutes and 24
 * hours, its accounts set at the 101 it keeps), then reopened, and timed with new people from it.
 */
export async function benchKeyCost(url: string, events: number, samples = SAMPLE): Promise<KeyCostFigures> {
  const parsed = parseDatabaseUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  let now = Date.parse('2026-06-01T00:00:00Z');
  const open = () => openStore({ database: parsed, logger: pino({ level: 'warn' }), retentionDays: 0, historyDays: 180, writeLog: true, now: () => now });
  const seed = await open();
  const hash = seed.hashIdentifier;
  const ip = hash('default', 'ip', `10.200.${events % 256}.1`);
  const minute = Math.floor(now / 60_000);
  const hour = Math.floor(now / 3_600_000);
  const spread = (n: number, parts: number) => Array.from({ length: parts }, (_, i) => Math.floor(n / parts) + (i < n % parts ? 1 : 0));
  const counts = [
    ...spread(events, 60).map((n, i) => ({ account_id: 'default', key: ip, grain: 1, bucket: minute - i, n })),
    ...spread(events, 24).map((n, i) => ({ account_id: 'default', key: ip, grain: 2, bucket: hour - i, n })),
  ].filter((c) => c.n > 0);
  const members = Array.from({ length: Math.min(events, SET_KEEP) }, (_, i) => ({
    account_id: 'default', key: ip, kind: 'a', member: hash('default', 'user', `farm-${events}-${i}`), last_seen: now - i * 1_000,
  }));
  // As each engine keeps them: SQLite one row an identifier (migration 19).
  await seedHistory(seed, { counts, members });
  await seed.close();

  const store = await open();
  try {
    const history = store.history!;
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      now += 7;
      const user = hash('default', 'user', `new-${events}-${i}`);
      const event = historyEvent({ account: 'default', at: now, ip, email: hash('default', 'email', `new${i}@example.com`), identity: user, device: hash('default', 'device', `d-${events}-${i}`), user, place: PLACE });
      const started = performance.now();
      const prior = await history.record(event);
      if (prior !== null) historyFacts(prior, event);
      times.push((performance.now() - started) * 1000);
    }
    return { engine: store.engine.kind, events, record_us: stats(times) };
  } finally {
    await store.close();
  }
}
