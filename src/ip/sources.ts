import { join } from 'node:path';
import type { AnonymousIPResponse, AsnResponse, CityResponse } from 'maxmind';
import type { Logger } from 'pino';
import { loadAsnCsv, type AsnTable } from './asn-csv.js';
import { loadAddressList, type AddressList } from './lists.js';
import { loadMmdb, type MmdbDatabase } from './maxmind.js';
import type { OpenDataFiles } from './open-data.js';
import { ReloadableSource, type Loaded } from './reload.js';

/** Every IP data source, each reloadable on its own. File names are PRODUCT.md's `DATA_DIR` layout. */
export interface IpSources {
  city: ReloadableSource<MmdbDatabase<CityResponse>>;
  asn: ReloadableSource<MmdbDatabase<AsnResponse>>;
  anonymous: ReloadableSource<MmdbDatabase<AnonymousIPResponse>>;
  tor: ReloadableSource<AddressList>;
  datacenter: ReloadableSource<AddressList>;
  proxy: ReloadableSource<AddressList>;
  /** VPN services' server addresses: says only `true` (a list of some services clears no address). */
  vpn: ReloadableSource<AddressList>;
  openCountry: ReloadableSource<MmdbDatabase<{ country_code?: string }>> | null;
  openAsn: ReloadableSource<AsnTable> | null;
}

const mmdb = <T extends object>(kind: Parameters<typeof loadMmdb>[1]) =>
  async (file: string): Promise<Loaded<MmdbDatabase<T>>> => {
    const db = await loadMmdb<T>(file, kind);
    return { value: db, type: db.type, buildDate: db.buildDate, entries: db.networks };
  };

/**
 * The bundled files never change while the process runs, so every inspector in the process (the
 * app, and each test that builds one) shares one load of each. A failed load is not remembered.
 */
const sharedLoads = new Map<string, Promise<unknown>>();
function shared<T>(key: string, load: () => Promise<T>): Promise<T> {
  let pending = sharedLoads.get(key) as Promise<T> | undefined;
  if (pending === undefined) {
    pending = load();
    sharedLoads.set(key, pending);
    pending.catch(() => sharedLoads.delete(key));
  }
  return pending;
}

const list = async (file: string, signal: AbortSignal): Promise<Loaded<AddressList>> => {
  const value = await loadAddressList(file, signal);
  return { value, type: 'list', buildDate: value.modified, entries: value.entries, malformed: value.malformed };
};

export function createSources(dataDir: string, openData: OpenDataFiles | null, logger: Logger): IpSources {
  const inData = (...names: string[]) => names.map((n) => join(dataDir, n));
  return {
    city: new ReloadableSource('ip.maxmind.city', inData('GeoIP2-City.mmdb', 'GeoLite2-City.mmdb'), mmdb('city'), logger),
    asn: new ReloadableSource('ip.maxmind.asn', inData('GeoIP2-ISP.mmdb', 'GeoLite2-ASN.mmdb'), mmdb('asn'), logger),
    anonymous: new ReloadableSource(
      'ip.maxmind.anonymous_ip', inData('GeoIP2-Anonymous-IP.mmdb'), mmdb('anonymous-ip'), logger,
    ),
    tor: new ReloadableSource('ip.list.tor', inData('tor-exit-nodes.txt'), list, logger),
    datacenter: new ReloadableSource('ip.list.datacenter', inData('datacenter-ranges.txt'), list, logger),
    proxy: new ReloadableSource('ip.list.proxy', inData('proxy-list.txt'), list, logger),
    vpn: new ReloadableSource('ip.list.vpn', inData('vpn-list.txt'), list, logger),
    openCountry: openData && new ReloadableSource(
      'ip.open.country',
      [openData.countryMmdb],
      async (file) => {
        const loaded = await shared(file, () => mmdb<{ country_code?: string }>('country')(file));
        return { ...loaded, type: `open data: ${loaded.type}` };
      },
      logger,
      openData.countryPackage,
    ),
    openAsn: openData && new ReloadableSource(
      'ip.open.asn',
      [openData.asnIpv4NumCsv, openData.asnIpv6Csv],
      async () => {
        const table = await shared(`${openData.asnIpv4NumCsv}|${openData.asnIpv6Csv}`, () =>
          loadAsnCsv({ ipv4Num: openData.asnIpv4NumCsv, ipv6: openData.asnIpv6Csv }));
        if (table.entries === 0) throw new Error('no ASN ranges read');
        return {
          value: table, type: 'open data: asn', buildDate: openData.asnBuildDate,
          entries: table.entries, malformed: table.malformed, overlapping: table.overlapping,
        };
      },
      logger,
      openData.asnPackage,
    ),
  };
}

/** The sources read from `DATA_DIR`, which are watched (the bundled open data does not change while running). */
export function dataDirSources(sources: IpSources): ReloadableSource<unknown>[] {
  return [sources.city, sources.asn, sources.anonymous, sources.tor, sources.datacenter, sources.proxy, sources.vpn];
}
