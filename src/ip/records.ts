import type { IpFacts } from './facts.js';

/**
 * Facts read out of MaxMind DB records, each value checked by type as it is read
 * (https://dev.maxmind.com/geoip/docs/databases). A file can pass every load check and still hold
 * a number where a city name belongs: such a value is never passed on. It reads as `null`, and the
 * reading names it in `wrongType`, so the caller reports the check it feeds as unavailable.
 *
 * A value that is absent reads as `null` (an anonymity flag as `false`: the Anonymous-IP database
 * stores only true flags). Records are shared between look-ups (the reader caches them): read only.
 */
export type Geo = Pick<IpFacts,
  'country_code' | 'country' | 'region' | 'city' | 'postal_code' | 'latitude' | 'longitude' | 'accuracy_radius_km' | 'time_zone'>;

/** The first value of a record found of the wrong type, as `path is a number, not text`; `null` when none. */
interface Checked {
  wrongType: string | null;
}

export interface GeoReading extends Geo, Checked {}

export interface AsnReading extends Checked {
  asn: number | null;
  organization: string | null;
}

/** Each flag `true` or `false`, or `null` when the record holds something else there. */
export interface AnonymousReading extends Checked {
  tor: boolean | null;
  vpn: boolean | null;
  hosting: boolean | null;
  proxy: boolean | null;
}

export interface CountryReading extends Checked {
  country_code: string | null;
}

/** Reads one record, remembering the first value of the wrong type. */
class RecordReader {
  wrongType: string | null = null;

  map(value: unknown, path: string): Record<string, unknown> | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    this.wrong(path, value, 'a map');
    return undefined;
  }

  /** The first element of an array of maps (MaxMind lists subdivisions from the largest down). */
  firstOf(value: unknown, path: string, firstPath: string): Record<string, unknown> | undefined {
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return this.map(value[0], firstPath);
    this.wrong(path, value, 'an array');
    return undefined;
  }

  text(value: unknown, path: string): string | null {
    if (value === undefined || value === null) return null;
    if (typeof value === 'string') return value;
    this.wrong(path, value, 'text');
    return null;
  }

  /** A finite number within `min..max` (an integer when `integer`). */
  number(value: unknown, path: string, min: number, max: number, integer = false): number | null {
    if (value === undefined || value === null) return null;
    if (typeof value === 'number' && value >= min && value <= max && (!integer || Number.isInteger(value))) return value;
    this.wrong(path, value, `${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    return null;
  }

  flag(value: unknown, path: string): boolean | null {
    if (value === undefined || value === null) return false;
    if (typeof value === 'boolean') return value;
    this.wrong(path, value, 'true or false');
    return null;
  }

  private wrong(path: string, value: unknown, expected: string): void {
    this.wrongType ??= `${path} is ${describe(value)}, not ${expected}`;
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return 'text';
  return typeof value === 'number' ? `the number ${value}` : `a ${typeof value}`;
}

/** City (and Country) schema: `null` for an address the database does not hold. */
export function readCity(record: unknown): GeoReading {
  const r = new RecordReader();
  const root = r.map(record, 'the record');
  const country = r.map(root?.country, 'country');
  const subdivision = r.firstOf(root?.subdivisions, 'subdivisions', 'subdivisions[0]');
  const city = r.map(root?.city, 'city');
  const location = r.map(root?.location, 'location');
  return {
    country_code: r.text(country?.iso_code, 'country.iso_code'),
    country: r.text(r.map(country?.names, 'country.names')?.en, 'country.names.en'),
    region: r.text(r.map(subdivision?.names, 'subdivisions[0].names')?.en, 'subdivisions[0].names.en'),
    city: r.text(r.map(city?.names, 'city.names')?.en, 'city.names.en'),
    postal_code: r.text(r.map(root?.postal, 'postal')?.code, 'postal.code'),
    latitude: r.number(location?.latitude, 'location.latitude', -90, 90),
    longitude: r.number(location?.longitude, 'location.longitude', -180, 180),
    // Kilometres: no radius is wider than half the Earth's circumference.
    accuracy_radius_km: r.number(location?.accuracy_radius, 'location.accuracy_radius', 0, 20_040),
    time_zone: r.text(location?.time_zone, 'location.time_zone'),
    wrongType: r.wrongType,
  };
}

/** ASN (and ISP) schema. */
export function readAsn(record: unknown): AsnReading {
  const r = new RecordReader();
  const root = r.map(record, 'the record');
  return {
    asn: r.number(root?.autonomous_system_number, 'autonomous_system_number', 0, 0xffffffff, true),
    organization: r.text(root?.autonomous_system_organization, 'autonomous_system_organization'),
    wrongType: r.wrongType,
  };
}

/** Anonymous-IP schema: an address the database does not hold has every flag `false`. */
export function readAnonymous(record: unknown): AnonymousReading {
  const r = new RecordReader();
  const root = r.map(record, 'the record');
  const publicProxy = r.flag(root?.is_public_proxy, 'is_public_proxy');
  const residentialProxy = r.flag(root?.is_residential_proxy, 'is_residential_proxy');
  return {
    tor: r.flag(root?.is_tor_exit_node, 'is_tor_exit_node'),
    vpn: r.flag(root?.is_anonymous_vpn, 'is_anonymous_vpn'),
    hosting: r.flag(root?.is_hosting_provider, 'is_hosting_provider'),
    // Either flag makes a proxy; a garbled one leaves it unknown unless the other says so.
    proxy: publicProxy === true || residentialProxy === true ? true : publicProxy === null || residentialProxy === null ? null : false,
    wrongType: r.wrongType,
  };
}

/** The open data's country schema: `{ country_code }`. */
export function readCountry(record: unknown): CountryReading {
  const r = new RecordReader();
  return { country_code: r.text(r.map(record, 'the record')?.country_code, 'country_code'), wrongType: r.wrongType };
}

/** What the look-up error handler is given for a value of the wrong type: it is logged, never shown to a client. */
export class WrongTypeError extends Error {}
