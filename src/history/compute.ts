import { isoTime } from '../core/iso-time.js';
import { MIN_TRAVEL_INTERVAL_MS, SET_CAP } from './caps.js';
import type { HistoryEvent, Prior, SetReading } from './event.js';
import type { HistoryFacts, PreviousEvent } from './facts.js';
import { velocityValues } from './velocity.js';
import { eitherAnonymous, leastDistanceKm, type Place } from './place.js';

/**
 * The `history` object from what came before and the event itself: a pure function, the same for
 * both engines (each only reads `Prior` its own way). The event counts: a first event from an IP
 * is `events_1h: 1`.
 */
export function historyFacts(prior: Prior, event: HistoryEvent): HistoryFacts {
  const atLeast: string[] = [];
  /** The set's count with this event's member in it (when the event has one). */
  const distinct = (path: string, set: SetReading, since: number, adds = true): number => {
    const n = set.count + (!adds || (set.current !== null && set.current >= since) ? 0 : 1);
    if (n <= SET_CAP) return n;
    atLeast.push(path);
    return SET_CAP;
  };
  const firstSeen = (seen: number | null) => isoTime(seen === null ? event.at : Math.min(seen, event.at));

  const ip = {
    events_1h: prior.ip.minutes + 1,
    events_24h: prior.ip.hours + 1,
    accounts_24h: distinct('ip.accounts_24h', prior.ip.accounts, event.since24h),
  };
  const email = {
    events_24h: prior.email.hours + 1,
    devices_30d: distinct('email.devices_30d', prior.email.devices, event.since30d, event.device !== null),
    first_seen: firstSeen(prior.email.firstSeen),
  };
  const device = prior.device === null ? null : {
    events_1h: prior.device.minutes + 1,
    accounts_30d: distinct('device.accounts_30d', prior.device.accounts, event.since30d),
    first_seen: firstSeen(prior.device.firstSeen),
  };
  let user: HistoryFacts['user'] = null;
  if (prior.user !== null) {
    const u = prior.user;
    // Nothing to compare with (the user's first event, or earlier events that sent no device or had
    // no known country): new device and new country are not known.
    const known = u.lastSeen !== null;
    user = {
      first_seen: firstSeen(u.firstSeen),
      new_device: u.baseline.devices && event.device !== null ? u.devices.current === null : null,
      new_country: u.baseline.countries && event.country !== null ? u.countries.current === null : null,
      devices_30d: distinct('user.devices_30d', u.devices, event.since30d, event.device !== null),
      countries_24h: distinct('user.countries_24h', u.countries, event.since24h, event.country !== null),
      previous: known && u.place !== null ? previousEvent(u.lastSeen!, u.place, event) : null,
    };
  }
  const facts: HistoryFacts = { ip, email, device, user, at_least: atLeast, partial: false };
  if (event.velocity !== null && event.velocity.reads.length > 0) facts.velocity = velocityValues(event.velocity, prior.velocity);
  return facts;
}

function previousEvent(at: number, place: Place, event: HistoryEvent): PreviousEvent {
  const distance = leastDistanceKm(place, event.place);
  const hours = Math.max(Math.abs(event.at - at), MIN_TRAVEL_INTERVAL_MS) / 3_600_000;
  const sameNetwork = place.asn === null || event.place.asn === null || place.country === null || event.place.country === null
    ? null
    : place.asn === event.place.asn && place.country === event.place.country;
  return {
    at: isoTime(at),
    country_code: place.country,
    distance_km: distance === null ? null : Math.round(distance),
    speed_kmh: distance === null ? null : Math.round(distance / hours),
    same_network: sameNetwork,
    anonymous: eitherAnonymous(place, event.place),
  };
}
