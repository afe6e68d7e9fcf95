import { describe, expect, it } from 'vitest';
import { historyEvent } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import { createLocalCounts } from '../../src/history/local-counts.js';
import type { Place } from '../../src/history/place.js';

/** This replica's own event counts (src/history/local-counts.ts): the windows history counts, and the bound. */
const NOWHERE: Place = { country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: false };
const hash = keyedHasher(Buffer.alloc(32, 3));
const START = Date.parse('2026-06-01T12:00:30Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const event = (at: number, ip = '203.0.113.1', person = 'a', withDevice = true) => {
  const email = hash('acme', 'email', `${person}@example.com`);
  return historyEvent({
    account: 'acme', at, ip: hash('acme', 'ip', ip), email, identity: email, user: null, place: NOWHERE,
    device: withDevice ? hash('acme', 'device', person) : null,
  });
};

describe('local counts', () => {
  it('count the last 60 minutes and the last 24 hours, this event included, as history does', () => {
    const counts = createLocalCounts();
    expect(counts.count(event(START))).toEqual({ ip: { events_1h: 1, events_24h: 1 }, email: { events_24h: 1 }, device: { events_1h: 1 } });
    counts.count(event(START + 10 * MINUTE));
    expect(counts.count(event(START + 59 * MINUTE)).ip).toEqual({ events_1h: 3, events_24h: 3 });
    // The first minute has left the hour; the first hour is still in the day.
    expect(counts.count(event(START + 60 * MINUTE)).ip).toEqual({ events_1h: 3, events_24h: 4 });
    // Two hours on: nothing left in the hour.
    expect(counts.count(event(START + 3 * HOUR)).ip).toEqual({ events_1h: 1, events_24h: 5 });
    // A day and more later, the day starts again.
    expect(counts.count(event(START + 30 * HOUR, '203.0.113.1', 'b', false))).toEqual({ ip: { events_1h: 1, events_24h: 1 }, email: { events_24h: 1 }, device: null });
    // A clock a little behind counts in its minute; one behind the window does not count.
    expect(counts.count(event(START + 30 * HOUR - 5 * MINUTE)).ip).toEqual({ events_1h: 2, events_24h: 2 });
    expect(counts.count(event(START + 28 * HOUR)).ip).toEqual({ events_1h: 2, events_24h: 3 });
  });

  it('answer what counting every event of the window again would, through gaps and clocks behind', () => {
    // Each ring keeps its total as it counts and clears buckets: checked against a plain count of
    // the events it took, over a stream with every kind of step (the same minute, the next, past
    // the hour, past the day, behind).
    const counts = createLocalCounts();
    const taken = new Map<string, { minutes: number[]; hours: number[]; lastMinute: number; lastHour: number }>();
    let random = 7;
    const next = () => (random = (random * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let at = START;
    for (let i = 0; i < 3_000; i++) {
      const step = next();
      at += step < 0.4 ? 0 : step < 0.7 ? MINUTE : step < 0.85 ? 17 * MINUTE : step < 0.9 ? 5 * HOUR : step < 0.95 ? 25 * HOUR : -3 * MINUTE;
      const ip = `203.0.113.${Math.floor(next() * 30)}`;
      const state = taken.get(ip) ?? { minutes: [], hours: [], lastMinute: 0, lastHour: 0 };
      taken.set(ip, state);
      const minute = Math.floor(at / MINUTE);
      const hour = Math.floor(at / HOUR);
      // An event behind its window is not counted in it.
      if (minute > state.lastMinute - 60) state.minutes.push(minute);
      if (hour > state.lastHour - 24) state.hours.push(hour);
      state.lastMinute = Math.max(state.lastMinute, minute);
      state.lastHour = Math.max(state.lastHour, hour);
      expect(counts.count(event(at, ip, 'a', false)).ip).toEqual({
        events_1h: state.minutes.filter((m) => m > state.lastMinute - 60).length,
        events_24h: state.hours.filter((h) => h > state.lastHour - 24).length,
      });
    }
  });

  it('start a key from 0 in a slot an evicted key held, whatever that key\'s totals were', () => {
    const counts = createLocalCounts(100);
    for (let i = 0; i < 50; i++) counts.count(event(START, '198.51.100.7', 'busy'));
    // New addresses and people, each once: the busy one's slot (and its totals) is taken again.
    for (let i = 0; i < 250; i++) {
      expect(counts.count(event(START + MINUTE, `203.0.113.${i}`, `p${i}`))).toEqual({ ip: { events_1h: 1, events_24h: 1 }, email: { events_24h: 1 }, device: { events_1h: 1 } });
    }
    expect(counts.count(event(START + MINUTE, '198.51.100.7', 'busy')).ip).toEqual({ events_1h: 1, events_24h: 1 });
  });

  it('hold at most their bound, and keep a key counted again over new ones', () => {
    const counts = createLocalCounts(100);
    for (let i = 0; i < 1_000; i++) {
      counts.count(event(START, '203.0.113.9', 'hot', false));
      counts.count(event(START, `198.51.${i >> 8}.${i & 255}`, `p${i}`, false));
      expect(counts.size()).toBeLessThanOrEqual(100);
    }
    // Kept through every eviction pass: the hot address counted all 1,000 of its events (and this one).
    expect(counts.count(event(START, '203.0.113.9', 'hot', false)).ip.events_1h).toBe(1_001);
  });

  it('evict a few per event, never many at once (a pass of thousands held the event loop)', () => {
    const counts = createLocalCounts(1_000);
    let largestDrop = 0;
    for (let i = 0; i < 3_000; i++) {
      const before = counts.size();
      counts.count(event(START, '203.0.113.9', `p${i}`));
      largestDrop = Math.max(largestDrop, before + 2 - counts.size());
      expect(counts.size()).toBeLessThanOrEqual(1_000);
    }
    // Down to 90 % at once would have been 100.
    expect(largestDrop).toBeLessThanOrEqual(16);
  });
});

describe('local counts, erased', () => {
  it('forget an identifier: its counts start again from 0, the others\' stay', () => {
    const counts = createLocalCounts();
    counts.count(event(START));
    counts.count(event(START));
    counts.forget([hash('acme', 'email', 'a@example.com')]);
    expect(counts.count(event(START))).toEqual({ ip: { events_1h: 3, events_24h: 3 }, email: { events_24h: 1 }, device: { events_1h: 3 } });
  });
});
