import { DAY_MS, HOUR_MS, MINUTE_MS } from './caps.js';
import type { Place } from './place.js';
import type { VelocityStep } from './velocity.js';

/**
 * One evaluation as history records it: keyed hashes (identifiers.ts), the time, and the place of
 * the address (for a user's previous event). Window starts are computed once here, so both engines
 * read the same windows.
 */
export interface HistoryEvent {
  account: string;
  at: number;
  minute: number;
  hour: number;
  since24h: number;
  since30d: number;
  ip: Buffer;
  email: Buffer;
  /** The account behind the event: the user's key when `user_id` was sent, else the e-mail's. */
  identity: Buffer;
  device: Buffer | null;
  user: Buffer | null;
  /** The country as 2 bytes (a set member), or null. */
  country: Buffer | null;
  place: Place;
  /** The velocity counters it reads and counts (velocity.ts); null when its rule files define none. */
  velocity: VelocityStep | null;
}

export function historyEvent(fields: Omit<HistoryEvent, 'minute' | 'hour' | 'since24h' | 'since30d' | 'country' | 'velocity'> & { velocity?: VelocityStep | null }): HistoryEvent {
  const at = fields.at;
  const country = fields.place.country;
  return {
    ...fields,
    velocity: fields.velocity ?? null,
    minute: Math.floor(at / MINUTE_MS),
    hour: Math.floor(at / HOUR_MS),
    since24h: at - DAY_MS,
    since30d: at - 30 * DAY_MS,
    country: country === null ? null : Buffer.from(country, 'latin1'),
  };
}

/**
 * A distinct set as read before the event: members seen since the window's start (at most
 * SET_KEEP), and when the event's own member was last seen (any age), if ever; `null` too when
 * the event has no such member (no device, no country).
 */
export interface SetReading {
  count: number;
  current: number | null;
}

/** What came before the event, as the store read it (the event itself not yet counted). */
export interface Prior {
  ip: { minutes: number; hours: number; accounts: SetReading };
  email: { hours: number; firstSeen: number | null; devices: SetReading };
  device: { minutes: number; firstSeen: number | null; accounts: SetReading } | null;
  user: {
    firstSeen: number | null;
    lastSeen: number | null;
    place: Place | null;
    devices: SetReading;
    countries: SetReading;
    /**
     * Whether the user's set of devices / of countries held any member (within HISTORY_DAYS) before
     * this event: without one, "new" has nothing to be new against.
     */
    baseline: { devices: boolean; countries: boolean };
  } | null;
  /** Each velocity read's events before this one (0 for a read without a key); empty without counters. */
  velocity: number[];
}
