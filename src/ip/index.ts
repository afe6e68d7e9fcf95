import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { IpInspector } from '../evaluation/ports.js';
import { unknownIp } from '../evaluation/unknown.js';

export interface IpInspectorOptions {
  config: Config;
  logger: Logger;
}

/** Seam: until IP intelligence lands, every IP check is reported as unavailable, never as clean. */
export async function createIpInspector(_options: IpInspectorOptions): Promise<IpInspector> {
  return {
    inspect: (ip) => unknownIp(ip, ['ip.geo', 'ip.asn', 'ip.tor', 'ip.proxy', 'ip.datacenter', 'ip.vpn', 'ip.bogon']),
    status: () => [],
    close: async () => {},
  };
}
