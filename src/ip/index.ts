import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { IpInspector } from '../evaluation/ports.js';

export interface IpInspectorOptions {
  config: Config;
  logger: Logger;
}

/** Seam: until IP intelligence lands, every IP check is reported as unavailable, never as clean. */
export async function createIpInspector(_options: IpInspectorOptions): Promise<IpInspector> {
  return {
    inspect(ip) {
      return {
        facts: {
          address: ip.address,
          version: ip.version,
          country_code: null, country: null, region: null, city: null, postal_code: null,
          latitude: null, longitude: null, accuracy_radius_km: null, time_zone: null,
          asn: null, as_organization: null,
          is_tor: null, is_proxy: null, is_datacenter: null, is_vpn: null, is_bogon: null,
        },
        unavailable: ['ip.geo', 'ip.asn', 'ip.tor', 'ip.proxy', 'ip.datacenter', 'ip.vpn', 'ip.bogon'],
      };
    },
    status: () => [],
    close: async () => {},
  };
}
