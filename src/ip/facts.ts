import type { AnonymousIPResponse, AsnResponse, CityResponse } from 'maxmind';
import type { IpFacts, Report } from '../evaluation/facts.js';
import type { ParsedIp } from './address.js';
import type { AsnTable } from './asn-csv.js';
import { isBogon } from './bogon.js';
import { isHostingAsn } from './hosting-asns.js';
import type { AddressList } from './lists.js';
import type { MmdbDatabase } from './maxmind.js';
import { keyOf } from './numeric.js';
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
function signal(...answers: Answer[]): boolean | null {
  if (answers.includes(true)) return true;
  return answers.includes(false) ? false : null;
}

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
export function factsOf(ip: ParsedIp, sources: LoadedSources, onError: (source: string, error: unknown) => void): Report<IpFacts> {
  const key = keyOf(ip);
  const guarded = <T>(name: string, lookup: () => T | undefined): T | undefined => {
    try {
      return lookup();
    } catch (error) {
      onError(name, error);
      return undefined;
    }
  };
  const has = (name: string, list: AddressList | null): Answer => (list ? guarded(name, () => list.has(key)) : undefined);

  const facts: IpFacts = {
    address: ip.address, version: ip.version,
    country_code: null, country: null, region: null, city: null, postal_code: null,
    latitude: null, longitude: null, accuracy_radius_km: null, time_zone: null,
    asn: null, as_organization: null,
    is_tor: null, is_proxy: null, is_datacenter: null, is_vpn: null,
    is_bogon: isBogon(key),
  };
  const unavailable: string[] = [];

  const city = sources.city ? guarded('ip.maxmind.city', () => sources.city!.lookup(ip)) : undefined;
  if (city !== undefined) {
    Object.assign(facts, geoOf(city));
  } else {
    const open = sources.openCountry ? guarded('ip.open.country', () => sources.openCountry!.lookup(ip)) : undefined;
    if (open === undefined) unavailable.push('ip.geo');
    const code = open?.country_code ?? null;
    facts.country_code = code;
    facts.country = code === null ? null : countryName(code);
  }

  const asnRecord = sources.asn ? guarded('ip.maxmind.asn', () => sources.asn!.lookup(ip)) : undefined;
  let asnAnswered = asnRecord !== undefined;
  if (asnRecord) {
    facts.asn = asnRecord.autonomous_system_number ?? null;
    facts.as_organization = asnRecord.autonomous_system_organization ?? null;
  } else if (asnRecord === undefined && sources.openAsn) {
    const open = guarded('ip.open.asn', () => sources.openAsn!.lookup(key));
    asnAnswered = open !== undefined;
    facts.asn = open?.asn ?? null;
    facts.as_organization = open?.organization ?? null;
  }
  if (!asnAnswered) unavailable.push('ip.asn');

  // The Anonymous-IP database lists only anonymous networks: an address it does not hold has every flag false.
  const anon = sources.anonymous ? guarded('ip.maxmind.anonymous_ip', () => sources.anonymous!.lookup(ip)) : undefined;
  const flag = (read: (r: AnonymousIPResponse) => boolean | undefined): Answer =>
    anon === undefined ? undefined : anon === null ? false : read(anon) === true;

  facts.is_tor = signal(has('ip.list.tor', sources.tor), flag((r) => r.is_tor_exit_node));
  facts.is_proxy = signal(
    has('ip.list.proxy', sources.proxy),
    flag((r) => r.is_public_proxy === true || r.is_residential_proxy === true),
  );
  facts.is_datacenter = signal(
    has('ip.list.datacenter', sources.datacenter),
    asnAnswered ? facts.asn !== null && isHostingAsn(facts.asn) : undefined,
    flag((r) => r.is_hosting_provider),
  );
  facts.is_vpn = signal(flag((r) => r.is_anonymous_vpn));

  for (const [name, value] of [
    ['ip.tor', facts.is_tor], ['ip.proxy', facts.is_proxy], ['ip.datacenter', facts.is_datacenter], ['ip.vpn', facts.is_vpn],
  ] as const) {
    if (value === null) unavailable.push(name);
  }
  return { facts, unavailable };
}

type Geo = Pick<IpFacts,
  'country_code' | 'country' | 'region' | 'city' | 'postal_code' | 'latitude' | 'longitude' | 'accuracy_radius_km' | 'time_zone'>;

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
