import type { IpFacts } from '../ip/facts.js';
import { COUNTRY_EXTENTS } from './country-extents.js';

/**
 * Where an event happened, as precisely as the data allows: the City database's coordinates and
 * accuracy radius when loaded, else the country's centre and the radius of a circle that holds all
 * of it (country-extents.ts), so a coarse position never places anyone closer than they may be.
 */
export interface Place {
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  /** How far the person may be from the point, in km. */
  radiusKm: number | null;
  asn: number | null;
  /**
   * The address is a known VPN, proxy, Tor exit or hosting network: it says where the network is,
   * not the person. `null` when no flag says so and one is unknown (its source not loaded or not
   * answering): unknown is not clean.
   */
  anonymous: boolean | null;
}

export function placeOf(ip: IpFacts): Place {
  const flags = [ip.is_vpn, ip.is_proxy, ip.is_tor, ip.is_datacenter];
  const anonymous = flags.includes(true) ? true : flags.includes(null) ? null : false;
  const base = { country: ip.country_code, asn: ip.asn, anonymous };
  if (ip.latitude !== null && ip.longitude !== null && Number.isFinite(ip.latitude) && Number.isFinite(ip.longitude)) {
    // A City record without a radius is read as its country's size: never more precise than it claims.
    const country = ip.country_code === null ? undefined : COUNTRY_EXTENTS[ip.country_code];
    const radius = ip.accuracy_radius_km ?? country?.[2] ?? null;
    return { ...base, latitude: ip.latitude, longitude: ip.longitude, radiusKm: radius };
  }
  const extent = ip.country_code === null ? undefined : COUNTRY_EXTENTS[ip.country_code];
  if (extent === undefined) return { ...base, latitude: null, longitude: null, radiusKm: null };
  return { ...base, latitude: extent[0], longitude: extent[1], radiusKm: extent[2] };
}

const EARTH_RADIUS_KM = 6371.0088;
const RAD = Math.PI / 180;

/** Great-circle distance in km (haversine, on the mean Earth radius). */
export function greatCircleKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Either place anonymous: true when one is, unknown when neither is and one is unknown. */
export function eitherAnonymous(a: Place, b: Place): boolean | null {
  if (a.anonymous === true || b.anonymous === true) return true;
  return a.anonymous === null || b.anonymous === null ? null : false;
}

/**
 * The least distance the person can have covered between two places: the distance between the
 * points less both radii, never below 0. `null` when either place is unknown.
 */
export function leastDistanceKm(a: Place, b: Place): number | null {
  if (a.latitude === null || a.longitude === null || a.radiusKm === null) return null;
  if (b.latitude === null || b.longitude === null || b.radiusKm === null) return null;
  return Math.max(0, greatCircleKm(a.latitude, a.longitude, b.latitude, b.longitude) - a.radiusKm - b.radiusKm);
}
