import { mapClock, type ClockVerdict } from '../core/map-clock.js';
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
 * Bounded: at most `maxKeys` identifiers (default 20,000). Each holds 89 cells of a shared
 * Uint32Array chunk (60 minute buckets, 24 hour buckets, the last minute and hour counted, a "seen
 * again" mark, each ring's total: 356 bytes), allocated 1,024 identifiers at a time as the map grows and reused after
 * an eviction (no allocation per identifier); with the Map entry and its 16-character key, ~460
 * bytes an identifier, so ~9 MiB at the bound (measured at 87 cells: see the commit that made them). Past 90 % of it, the least recently counted identifiers go first, a few per event (near enough:
 * a hit only marks its array, and the eviction cursor gives a marked one a
 * second chance: a delete and a set per hit slows a Map).
 * An evicted identifier starts again from 0 when it comes back: still a lower bound.
 */
export interface LocalCounts {
  /** Counts the event (its ip, e-mail and device) and returns what the counts say, this event included. */
  count(event: HistoryEvent): LocalReading;
  /** Forgets these identifiers (an erasure): their counts start again from 0. */
  forget(keys: readonly Buffer[]): void;
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
/** Past this share of the bound, every event evicts a little (see `evict`). */
const EVICT_TO = 0.9;
/** Identifiers the eviction cursor walks over per event, at most: an event counts three. */
const EVICT_STEP = 16;

const HOUR_CELLS = MINUTES_IN_WINDOW;
const LAST_MINUTE = HOUR_CELLS + HOURS_IN_WINDOW;
const LAST_HOUR = LAST_MINUTE + 1;
const RECENT = LAST_HOUR + 1;
/** Each ring's events, kept as they are counted and cleared: a count reads one cell, not its window's 60 or 24. */
const MINUTES_TOTAL = RECENT + 1;
const HOURS_TOTAL = MINUTES_TOTAL + 1;
const CELLS = HOURS_TOTAL + 1;

/** Identifiers' cells are allocated this many at a time (one Uint32Array each), as the map grows. */
const SLOTS_PER_CHUNK = 1_024;

export function createLocalCounts(maxKeys = LOCAL_COUNT_KEYS): LocalCounts {
  /** Identifier → its slot: cells `[slot % SLOTS_PER_CHUNK * CELLS, +CELLS)` of chunk `slot / SLOTS_PER_CHUNK`. */
  const slots = new Map<string, number>();
  const chunks: Uint32Array[] = [];
  /** Slots of evicted identifiers, reused before a new one is made. */
  const free: number[] = [];
  let made = 0;

  const chunkOf = (slot: number) => chunks[Math.floor(slot / SLOTS_PER_CHUNK)]!;
  const baseOf = (slot: number) => (slot % SLOTS_PER_CHUNK) * CELLS;

  /**
   * Second chance over the map's insertion order (src/core/map-clock.ts): an identifier counted
   * again since the cursor last passed it moves to the newest end; the others free their slot.
   * Once past EVICT_TO of the bound, every event moves the cursor over at most EVICT_STEP of them.
   */
  const clock = mapClock(slots, (_id, slot): ClockVerdict => {
    const cells = chunkOf(slot);
    const base = baseOf(slot);
    if (cells[base + RECENT] === 1) {
      cells[base + RECENT] = 0;
      return 'again';
    }
    free.push(slot);
    return 'evict';
  });
  const evict = (keep: number, limit: number) => clock(limit, () => slots.size > keep);

  /** A new identifier's slot: a freed one, else the next one (a new chunk every SLOTS_PER_CHUNK). */
  const newSlot = (): number => {
    const reused = free.pop();
    if (reused !== undefined) {
      // Its buckets start again from 0 at its first count (add() clears a ring whose last bucket is 0).
      const cells = chunkOf(reused);
      const base = baseOf(reused);
      cells[base + LAST_MINUTE] = 0;
      cells[base + LAST_HOUR] = 0;
      cells[base + RECENT] = 0;
      return reused;
    }
    if (made % SLOTS_PER_CHUNK === 0) chunks.push(new Uint32Array(SLOTS_PER_CHUNK * CELLS));
    return made++;
  };

  const slotOf = (key: Buffer): number => {
    const id = key.toString('latin1');
    let slot = slots.get(id);
    if (slot === undefined) {
      slot = newSlot();
      slots.set(id, slot);
    } else {
      chunkOf(slot)[baseOf(slot) + RECENT] = 1;
    }
    return slot;
  };

  /**
   * Adds one to the bucket of `at` in a ring of `size` buckets at `offset`, and returns the window's
   * sum, kept in the ring's total at `totalAt`.
   */
  const add = (cells: Uint32Array, offset: number, size: number, lastAt: number, totalAt: number, at: number): number => {
    const last = cells[lastAt]!;
    if (at > last) {
      // Buckets the window has left since the last count start again from 0 (all of them in a slot
      // new or taken again, whose cells may hold an evicted identifier's).
      if (last === 0) {
        cells.fill(0, offset, offset + size);
        cells[totalAt] = 0;
      } else {
        for (let i = 0, stale = Math.min(at - last, size); i < stale; i += 1) {
          const bucket = offset + ((at - i) % size);
          cells[totalAt]! -= cells[bucket]!;
          cells[bucket] = 0;
        }
      }
      cells[lastAt] = at;
    }
    // An event older than the window (a clock behind) is not counted in it.
    if (at > cells[lastAt]! - size) {
      cells[offset + (at % size)]! += 1;
      cells[totalAt]! += 1;
    }
    return cells[totalAt]!;
  };

  const countKey = (key: Buffer, minute: number, hour: number, minutes: boolean, hours: boolean) => {
    const slot = slotOf(key);
    const cells = chunkOf(slot);
    const base = baseOf(slot);
    return {
      minutes: minutes ? add(cells, base, MINUTES_IN_WINDOW, base + LAST_MINUTE, base + MINUTES_TOTAL, minute) : 0,
      hours: hours ? add(cells, base + HOUR_CELLS, HOURS_IN_WINDOW, base + LAST_HOUR, base + HOURS_TOTAL, hour) : 0,
    };
  };

  return {
    count(event) {
      // Room for the event's three identifiers made first: an eviction pass between them could
      // take the one this event has just counted.
      const keep = Math.floor(maxKeys * EVICT_TO);
      if (slots.size + 3 > keep) evict(keep, EVICT_STEP);
      // Marked all (each walked once, moved, and walked again): the rest at once, down to the bound.
      if (slots.size + 3 > maxKeys) evict(maxKeys - 3, Infinity);
      const ip = countKey(event.ip, event.minute, event.hour, true, true);
      const email = countKey(event.email, event.minute, event.hour, false, true);
      const device = event.device === null ? null : countKey(event.device, event.minute, event.hour, true, false);
      return {
        ip: { events_1h: ip.minutes, events_24h: ip.hours },
        email: { events_24h: email.hours },
        device: device === null ? null : { events_1h: device.minutes },
      };
    },
    forget(keys) {
      for (const key of keys) {
        const id = key.toString('latin1');
        const slot = slots.get(id);
        if (slot === undefined) continue;
        slots.delete(id);
        free.push(slot);
      }
    },
    size: () => slots.size,
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
