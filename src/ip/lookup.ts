import type { AnonymousIPResponse, AsnResponse, CityResponse } from 'maxmind';
import type { IpFacts } from './facts.js';
import type { Report } from '../core/ports.js';
import type { ParsedIp } from './address.js';
import type { AsnTable } from './asn-csv.js';
import { isBogon } from './bogon.js';
import { isHostingAsn } from './hosting-asns.js';
import type { AddressList } from './lists.js';
import type { MmdbDatabase } from './maxmind.js';
import { keyOf, type IpKey } from './numeric.js';
import { countryName } from './open-data.js';
import { readAnonymous, readAsn, readCity, readCountry, WrongTypeError, type AnonymousReading, type Geo } from './records.js';
import { isVpnAsn } from './vpn-asns.js';

/** The sources loaded at the moment of a look-up; `null` for one that is not. */
export interface LoadedSources {
  city: MmdbDatabase<CityResponse> | null;
  asn: MmdbDatabase<AsnResponse> | null;
  anonymous: MmdbDatabase<AnonymousIPResponse> | null;
  tor: AddressList | null;
  datacenter: AddressList | null;
  proxy: AddressList | null;
  vpn: AddressList | null;
  openCountry: MmdbDatabase<{ country_code?: string }> | null;
  openAsn: AsnTable | null;
}

/**
 * A source's answer for one signal: `true` or `false`; `null` when it should have answered and
 * could not (its look-up failed, or the value read was of the wrong type); `undefined` when it has
 * nothing to say (not loaded, or an IPv6 address asked of an IPv4-only database).
 */
type Answer = boolean | null | undefined;

/**
 * Three-valued "or" (Kleene): true if any source says so. Otherwise a source that failed makes the
 * signal unknown, because it might have said true: "not listed" is never concluded over a failure.
 */
function or(a: Answer, b: Answer): Answer {
  if (a === true || b === true) return true;
  if (a === null || b === null) return null;
  if (a === false || b === false) return false;
  return undefined;
}

/** The signal as reported: `null` (unknown, named in `unavailable`) unless some source answered. */
const signal = (answer: Answer): boolean | null => (answer === undefined ? null : answer);

type OnError = (source: string, error: unknown) => void;

const FAILED = Symbol('failed');

/** A source's look-up: `undefined` when the source is not loaded, FAILED when it threw (a corrupt region of a database). */
function look<S, A, T>(source: S | null, name: string, lookup: (source: S, arg: A) => T, arg: A, onError: OnError): T | undefined | typeof FAILED {
  if (source === null) return undefined;
  try {
    return lookup(source, arg);
  } catch (error) {
    onError(name, error);
    return FAILED;
  }
}

const inList = (list: AddressList, key: IpKey) => list.has(key);
const inMmdb = <T extends object>(db: MmdbDatabase<T>, ip: ParsedIp) => db.lookup(ip);
const inAsnTable = (table: AsnTable, key: IpKey) => table.lookup(key);

/** A list's answer for an address or the IPv4 address it carries (either listed is listed); `null` if a look-up failed. */
function listed(list: AddressList | null, name: string, key: IpKey, carried: IpKey | null, onError: OnError): Answer {
  const found = look(list, name, inList, key, onError);
  const answer = found === FAILED ? null : found;
  if (carried === null) return answer;
  const alsoFound = look(list, name, inList, carried, onError);
  return or(answer, alsoFound === FAILED ? null : alsoFound);
}

/** A value of the wrong type is reported once per source (the handler deduplicates) and its check listed. */
function wrongType(reading: { wrongType: string | null }, source: string, check: string, unavailable: string[], onError: OnError): boolean {
  if (reading.wrongType === null) return false;
  onError(source, new WrongTypeError(reading.wrongType));
  unavailable.push(check);
  return true;
}

/**
 * Everything the local data says about an address. Each signal is separate (hosting, VPN and proxy
 * are not lumped together); a signal no loaded source can answer is `null` and named in
 * `unavailable`, and so is one where a source failed and none said `true`. For geolocation and
 * the ASN, MaxMind files take precedence over the open data, which answers only where no MaxMind
 * database can (not loaded, failed, or an IPv4-only tree asked about IPv6). For the Tor, proxy,
 * data-center and VPN signals every source is heard and any `true` wins: a `DATA_DIR` list or a
 * curated ASN list saying `true` is not overruled by the Anonymous-IP database's `false` (its
 * absence there proves nothing; the lists are the operator's own choice, or fresher), and a list's
 * `false` never clears MaxMind's `true` (docs/data.md, "Precedence").
 *
 * An IPv6 address that carries an IPv4 client address (`ip.embedded`: NAT64, 6to4, Teredo...) is
 * checked against the lists and the Anonymous-IP database as both addresses, either listed being
 * listed. Geolocation, ASN (so the hosting- and VPN-ASN signals) and bogon status are the IPv4 client's:
 * the IPv6 prefix is a translator's or a relay's, which says nothing of where the client is.
 *
 * `ip.geo` is listed only when no geolocation source can answer. With the country-only open data,
 * the country is known and `ip.geo` is not listed; the finer fields (region, city, postal code,
 * coordinates, time zone) are `null`, which a rule must read as unknown. A value read of the wrong
 * type is `null` and lists its check (`ip.geo`, `ip.asn`, or the signal's).
 */
export function factsOf(ip: ParsedIp, sources: LoadedSources, onError: OnError): Report<IpFacts> {
  const key = keyOf(ip);
  const embedded = ip.embedded;
  const carriedKey = embedded === null ? null : keyOf(embedded);
  const unavailable: string[] = [];

  // Where the client is: the address, or the IPv4 address it carries.
  const geo = geolocation(embedded ?? ip, sources, unavailable, onError);
  const { asn, organization, hosting, vpn } = autonomousSystem(embedded ?? ip, carriedKey ?? key, sources, unavailable, onError);

  const flags = anonymousFlags(sources.anonymous, ip, onError);
  const carriedFlags = embedded === null ? undefined : anonymousFlags(sources.anonymous, embedded, onError);
  const is_tor = signal(or(or(listed(sources.tor, 'ip.list.tor', key, carriedKey, onError), flags?.tor), carriedFlags?.tor));
  const is_proxy = signal(or(or(listed(sources.proxy, 'ip.list.proxy', key, carriedKey, onError), flags?.proxy), carriedFlags?.proxy));
  const is_datacenter = signal(
    or(or(or(listed(sources.datacenter, 'ip.list.datacenter', key, carriedKey, onError), hosting), flags?.hosting), carriedFlags?.hosting),
  );
  // A VPN server list names some services' servers: listed is `true`, unlisted is no answer (never a clean).
  const vpnListed = listed(sources.vpn, 'ip.list.vpn', key, carriedKey, onError);
  const is_vpn = signal(or(or(or(vpnListed === false ? undefined : vpnListed, vpn), flags?.vpn), carriedFlags?.vpn));
  if (is_tor === null) unavailable.push('ip.tor');
  if (is_proxy === null) unavailable.push('ip.proxy');
  if (is_datacenter === null) unavailable.push('ip.datacenter');
  if (is_vpn === null) unavailable.push('ip.vpn');

  return {
    facts: {
      address: ip.address,
      version: ip.version,
      embedded_ipv4: embedded === null ? null : embedded.address,
      transition: embedded === null ? null : embedded.via,
      country_code: geo.country_code,
      country: geo.country,
      region: geo.region,
      city: geo.city,
      postal_code: geo.postal_code,
      latitude: geo.latitude,
      longitude: geo.longitude,
      accuracy_radius_km: geo.accuracy_radius_km,
      time_zone: geo.time_zone,
      asn,
      as_organization: organization,
      is_tor,
      is_proxy,
      is_datacenter,
      is_vpn,
      is_bogon: isBogon(carriedKey ?? key),
    },
    unavailable,
  };
}

/** The City database's answer, else the open data's country; lists `ip.geo` when neither can answer. */
function geolocation(ip: ParsedIp, sources: LoadedSources, unavailable: string[], onError: OnError): Geo {
  const city = look(sources.city, 'ip.maxmind.city', inMmdb, ip, onError);
  if (city !== undefined && city !== FAILED) {
    const reading = readCity(city);
    wrongType(reading, 'ip.maxmind.city', 'ip.geo', unavailable, onError);
    return reading;
  }
  const open = look(sources.openCountry, 'ip.open.country', inMmdb, ip, onError);
  if (open === undefined || open === FAILED) {
    unavailable.push('ip.geo');
    return NO_GEO;
  }
  const reading = readCountry(open);
  wrongType(reading, 'ip.open.country', 'ip.geo', unavailable, onError);
  const code = reading.country_code;
  return code === null ? NO_GEO : { ...NO_GEO, country_code: code, country: countryName(code) };
}

/**
 * The ASN database's answer, else the open data's; lists `ip.asn` when neither can answer.
 * `hosting`: whether the ASN is a hosting network's, for `is_datacenter`. `vpn`: `true` when the ASN
 * is a VPN service's own network, otherwise no answer (vpn-asns.ts says only `true`); `null` when
 * the ASN could not be read, since it might have been one.
 */
function autonomousSystem(
  ip: ParsedIp, key: IpKey, sources: LoadedSources, unavailable: string[], onError: OnError,
): { asn: number | null; organization: string | null; hosting: Answer; vpn: Answer } {
  const record = look(sources.asn, 'ip.maxmind.asn', inMmdb, ip, onError);
  if (record !== undefined && record !== FAILED) {
    const reading = readAsn(record);
    const wrong = wrongType(reading, 'ip.maxmind.asn', 'ip.asn', unavailable, onError);
    if (wrong) return { asn: reading.asn, organization: reading.organization, hosting: null, vpn: null };
    return { asn: reading.asn, organization: reading.organization, ...byAsn(reading.asn) };
  }
  const open = look(sources.openAsn, 'ip.open.asn', inAsnTable, key, onError);
  if (open === undefined || open === FAILED) {
    unavailable.push('ip.asn');
    const failed = open === FAILED || record === FAILED;
    return { asn: null, organization: null, hosting: failed ? null : undefined, vpn: failed ? null : undefined };
  }
  const asn = open?.asn ?? null;
  return { asn, organization: open?.organization ?? null, ...byAsn(asn) };
}

/** What the curated ASN lists say of a network: hosting `true`/`false`; VPN `true` or nothing. */
function byAsn(asn: number | null): { hosting: Answer; vpn: Answer } {
  return { hosting: asn !== null && isHostingAsn(asn), vpn: asn !== null && isVpnAsn(asn) ? true : undefined };
}

/** Every flag unknown: the database is loaded but its look-up failed. */
const FAILED_FLAGS: AnonymousReading = { tor: null, vpn: null, hosting: null, proxy: null, wrongType: null };

/**
 * The Anonymous-IP database's flags; `undefined` when it has nothing to say. It lists only
 * anonymous networks, so an address it does not hold has every flag `false` (it answered). A flag
 * of the wrong type is `null`; its signal is then listed unless another source says `true`.
 */
function anonymousFlags(db: MmdbDatabase<AnonymousIPResponse> | null, ip: ParsedIp, onError: OnError): AnonymousReading | undefined {
  const record = look(db, 'ip.maxmind.anonymous_ip', inMmdb, ip, onError);
  if (record === undefined) return undefined;
  if (record === FAILED) return FAILED_FLAGS;
  const flags = readAnonymous(record);
  if (flags.wrongType !== null) onError('ip.maxmind.anonymous_ip', new WrongTypeError(flags.wrongType));
  return flags;
}

const NO_GEO: Geo = {
  country_code: null, country: null, region: null, city: null, postal_code: null,
  latitude: null, longitude: null, accuracy_radius_km: null, time_zone: null,
};
