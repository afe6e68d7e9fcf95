import { HOURS_IN_WINDOW, MINUTES_IN_WINDOW } from './caps.js';
import type { HistoryEvent } from './event.js';
import type { HistoryFacts } from './facts.js';

/**
 * This replica's own event counts, in memory, for the event counters of `history` (ip.events_1h,
 * ip.events_24h, email.events_24h, device.events_1h): what the answer says when the store cannot
 * (issue 30). The recorder counts every evaluation here, the store answering or not, so a key
 * bursting on this replica is visible to its velocity rules while PostgreSQL is too slow, down, or
 * refuses a key past its statements in flight. Other replicas' events and what came before this
 * replica started are not in it: every count is a lower bound, and the answer built from it says
 * so (`partial: true`, the counts named in `at_least`). Distinct counts, first seen and the user's
 * facts need the store: they are null. Velocity counters (`velocity.*`, the rule file's own keys
 * and windows) are not counted here: a partial answer gives each `null` (unknown).
 *
 * Bounded: at most `maxKeys` identifiers (default 20,000). Each holds one Uint32Array of 87 cells
 * (60 minute buckets, 24 hour buckets, the last minute and hour counted, a "seen again" mark):
 * 348 bytes of counts, ~600 bytes with the Map entry, its 16-character key and the array's object,
 * so ~12 MiB at the bound. Past it, the least recently counted identifiers go first (near enough:
 * a hit only marks its array, and the eviction pass, down to 90 % of the bound, gives a marked one a
 * second chance, as src/store/history-sqlite.ts does: a delete and a set per hit slows a Map).
 * An evicted identifier starts again from 0 when it comes back: still a lower bound.
 */
export interface LocalCounts {
  /** Counts the event (its ip, e-mail and device) and returns what the counts say, this event included. */
  count(event: HistoryEvent): LocalReading;
  /** Identifiers held now. */
  size(): number;
}

/** The event counters `history` has, as this replica counted them (this event included). */
export interface LocalReading {
  ip: { events_1h: number; events_24h: number };
  email: { events_24h: number };
  device: { events_1h: number } | null;
}

export const LOCAL_COUNT_KEYS = 20_000;
/** Eviction goes down to this share of the bound, so it runs once per many new identifiers. */
const EVICT_TO = 0.9;

const HOUR_CELLS = MINUTES_IN_WINDOW;
const LAST_MINUTE = HOUR_CELLS + HOURS_IN_WINDOW;
const LAST_HOUR = LAST_MINUTE + 1;
const RECENT = LAST_HOUR + 1;
const CELLS = RECENT + 1;

export function createLocalCounts(maxKeys = LOCAL_COUNT_KEYS): LocalCounts {
  const counts = new Map<string, Uint32Array>();

  const evict = () => {
    const keep = Math.floor(maxKeys * EVICT_TO);
    for (const [id, cells] of counts) {
      if (counts.size <= keep) return;
      counts.delete(id);
      if (cells[RECENT] === 1) {
        // Counted again since the last pass: a second chance, at the newest end.
        cells[RECENT] = 0;
        counts.set(id, cells);
      }
    }
  };

  const cellsOf = (key: Buffer): Uint32Array => {
    const id = key.toString('latin1');
    let cells = counts.get(id);
    if (cells === undefined) {
      if (counts.size >= maxKeys) evict();
      cells = new Uint32Array(CELLS);
      counts.set(id, cells);
    } else {
      cells[RECENT] = 1;
    }
    return cells;
  };

  /** Adds one to the bucket of `at` in a ring of `size` buckets starting at `offset`, and returns the window's sum. */
  const add = (cells: Uint32Array, offset: number, size: number, lastAt: number, at: number): number => {
    const last = cells[lastAt]!;
    if (at > last) {
      // Buckets the window has left since the last count start again from 0.
      const stale = last === 0 ? size : Math.min(at - last, size);
      for (let i = 0; i < stale; i += 1) cells[offset + ((at - i) % size)] = 0;
      cells[lastAt] = at;
    }
    // An event older than the window (a clock behind) is not counted in it.
    if (at > cells[lastAt]! - size) cells[offset + (at % size)]! += 1;
    let total = 0;
    for (let i = 0; i < size; i += 1) total += cells[offset + i]!;
    return total;
  };

  const countKey = (key: Buffer, minute: number, hour: number, minutes: boolean, hours: boolean) => {
    const cells = cellsOf(key);
    return {
      minutes: minutes ? add(cells, 0, MINUTES_IN_WINDOW, LAST_MINUTE, minute) : 0,
      hours: hours ? add(cells, HOUR_CELLS, HOURS_IN_WINDOW, LAST_HOUR, hour) : 0,
    };
  };

  return {
    count(event) {
      const ip = countKey(event.ip, event.minute, event.hour, true, true);
      const email = countKey(event.email, event.minute, event.hour, false, true);
      const device = event.device === null ? null : countKey(event.device, event.minute, event.hour, true, false);
      return {
        ip: { events_1h: ip.minutes, events_24h: ip.hours },
        email: { events_24h: email.hours },
        device: device === null ? null : { events_1h: device.minutes },
      };
    },
    size: () => counts.size,
  };
}

/** Every count a partial answer holds: each only a lower bound. */
const LOWER_BOUNDS = ['ip.events_1h', 'ip.events_24h', 'email.events_24h'];
const LOWER_BOUNDS_WITH_DEVICE = [...LOWER_BOUNDS, 'device.events_1h'];

/**
 * The `history` of an answer the store could not give: this replica's counts (lower bounds, named
 * in `at_least`), null for what only the store knows, `user` null (its facts unknown), each velocity
 * counter of the rule file null.
 */
export function partialFacts(reading: LocalReading, velocityNames: readonly string[] | null): HistoryFacts {
  const facts: HistoryFacts = {
    ip: { events_1h: reading.ip.events_1h, events_24h: reading.ip.events_24h, accounts_24h: null },
    email: { events_24h: reading.email.events_24h, devices_30d: null, first_seen: null },
    device: reading.device === null ? null : { events_1h: reading.device.events_1h, accounts_30d: null, first_seen: null },
    user: null,
    at_least: [...(reading.device === null ? LOWER_BOUNDS : LOWER_BOUNDS_WITH_DEVICE)],
    partial: true,
  };
  if (velocityNames !== null && velocityNames.length > 0) facts.velocity = Object.fromEntries(velocityNames.map((name) => [name, null]));
  return facts;
}
