import type { AnonymousIPResponse, AsnResponse, CityResponse } from 'maxmind';
import type { IpFacts, Report } from '../evaluation/facts.js';
import type { ParsedIp } from './address.js';
import type { AsnTable } from './asn-csv.js';
import { isBogon } from './bogon.js';
import { isHostingAsn } from './hosting-asns.js';
import type { AddressList } from './lists.js';
import type { MmdbDatabase } from './maxmind.js';
import { keyOf, type IpKey } from './numeric.js';
import { countryName } from './open-data.js';

/** The sources loaded at the moment of a look-up; `null` for one that is not. */
export interface LoadedSources {
  city: MmdbDatabase<CityResponse> | null;
  asn: MmdbDatabase<AsnResponse> | null;
  anonymous: MmdbDatabase<AnonymousIPResponse> | null;
  tor: AddressList | null;
  datacenter: AddressList | null;
  proxy: AddressList | null;
  openCountry: MmdbDatabase<{ country_code?: string }> | null;
  openAsn: AsnTable | null;
}

/** A source's answer for one signal: `undefined` when it cannot answer (not loaded, wrong IP version, failed). */
type Answer = boolean | undefined;

/** True if any source says so, false if some source answered and none did, null (unknown) if none could answer. */
function signal(a: Answer, b: Answer = undefined, c: Answer = undefined): boolean | null {
  if (a === true || b === true || c === true) return true;
  return a === false || b === false || c === false ? false : null;
}

type OnError = (source: string, error: unknown) => void;

/** A source's look-up, where a failure (a corrupt region of a database) means "cannot answer". */
function guarded<S, A, T>(source: S | null, name: string, lookup: (source: S, arg: A) => T, arg: A, onError: OnError): T | undefined {
  if (source === null) return undefined;
  try {
    return lookup(source, arg);
  } catch (error) {
    onError(name, error);
    return undefined;
  }
}

const inList = (list: AddressList, key: IpKey) => list.has(key);
const inMmdb = <T extends object>(db: MmdbDatabase<T>, ip: ParsedIp) => db.lookup(ip);
const inAsnTable = (table: AsnTable, key: IpKey) => table.lookup(key);

/**
 * Everything the local data says about an address. Each signal is separate (hosting, VPN and proxy
 * are not lumped together); a signal no loaded source can answer is `null` and named in
 * `unavailable`. MaxMind files take precedence over the open data, which answers only where no
 * MaxMind database can (not loaded, or an IPv4-only tree asked about IPv6).
 *
 * `ip.geo` is listed only when no geolocation source can answer. With the country-only open data,
 * the country is known and `ip.geo` is not listed; the finer fields (region, city, postal code,
 * coordinates, time zone) are `null`, which a rule must read as unknown.
 */
export function factsOf(ip: ParsedIp, sources: LoadedSources, onError: OnError): Report<IpFacts> {
  const key = keyOf(ip);
  const unavailable: string[] = [];

  let geo: Geo = NO_GEO;
  const city = guarded(sources.city, 'ip.maxmind.city', inMmdb, ip, onError);
  if (city !== undefined) {
    geo = geoOf(city);
  } else {
    const open = guarded(sources.openCountry, 'ip.open.country', inMmdb, ip, onError);
    if (open === undefined) unavailable.push('ip.geo');
    const code = open?.country_code ?? null;
    if (code !== null) geo = { ...NO_GEO, country_code: code, country: countryName(code) };
  }

  let asn: number | null = null;
  let organization: string | null = null;
  const asnRecord = guarded(sources.asn, 'ip.maxmind.asn', inMmdb, ip, onError);
  let asnAnswered = asnRecord !== undefined;
  if (asnRecord) {
    asn = asnRecord.autonomous_system_number ?? null;
    organization = asnRecord.autonomous_system_organization ?? null;
  } else if (asnRecord === undefined) {
    const open = guarded(sources.openAsn, 'ip.open.asn', inAsnTable, key, onError);
    asnAnswered = open !== undefined;
    asn = open?.asn ?? null;
    organization = open?.organization ?? null;
  }
  if (!asnAnswered) unavailable.push('ip.asn');

  // The Anonymous-IP database lists only anonymous networks: an address it does not hold has every flag false.
  const anon = guarded(sources.anonymous, 'ip.maxmind.anonymous_ip', inMmdb, ip, onError);
  const flagged = anon === undefined ? undefined : anon ?? NOT_ANONYMOUS;

  const is_tor = signal(guarded(sources.tor, 'ip.list.tor', inList, key, onError), flagged && flagged.is_tor_exit_node === true);
  const is_proxy = signal(
    guarded(sources.proxy, 'ip.list.proxy', inList, key, onError),
    flagged && (flagged.is_public_proxy === true || flagged.is_residential_proxy === true),
  );
  const is_datacenter = signal(
    guarded(sources.datacenter, 'ip.list.datacenter', inList, key, onError),
    asnAnswered ? asn !== null && isHostingAsn(asn) : undefined,
    flagged && flagged.is_hosting_provider === true,
  );
  const is_vpn = signal(flagged && flagged.is_anonymous_vpn === true);
  if (is_tor === null) unavailable.push('ip.tor');
  if (is_proxy === null) unavailable.push('ip.proxy');
  if (is_datacenter === null) unavailable.push('ip.datacenter');
  if (is_vpn === null) unavailable.push('ip.vpn');

  return {
    facts: {
      address: ip.address,
      version: ip.version,
      ...geo,
      asn,
      as_organization: organization,
      is_tor,
      is_proxy,
      is_datacenter,
      is_vpn,
      is_bogon: isBogon(key),
    },
    unavailable,
  };
}

const NOT_ANONYMOUS: AnonymousIPResponse = {};

type Geo = Pick<IpFacts,
  'country_code' | 'country' | 'region' | 'city' | 'postal_code' | 'latitude' | 'longitude' | 'accuracy_radius_km' | 'time_zone'>;

const NO_GEO: Geo = {
  country_code: null, country: null, region: null, city: null, postal_code: null,
  latitude: null, longitude: null, accuracy_radius_km: null, time_zone: null,
};

/** City schema to response fields (https://dev.maxmind.com/geoip/docs/databases/city-and-country). */
function geoOf(r: CityResponse | null): Geo {
  const subdivision = r?.subdivisions?.[0];
  return {
    country_code: r?.country?.iso_code ?? null,
    country: r?.country?.names?.en ?? null,
    region: subdivision?.names?.en ?? null,
    city: r?.city?.names?.en ?? null,
    postal_code: r?.postal?.code ?? null,
    latitude: r?.location?.latitude ?? null,
    longitude: r?.location?.longitude ?? null,
    accuracy_radius_km: r?.location?.accuracy_radius ?? null,
    time_zone: r?.location?.time_zone ?? null,
  };
}
