import { z } from 'zod';
import type { ParsedIp } from './address.js';
import type { Report, Resource } from '../core/ports.js';
import { IPV4_TRANSITIONS } from './embedded.js';

/**
 * What the IP step reports and rules read (`ip.*`). Written once, as a zod schema: it types the
 * code and documents the response in the OpenAPI document. Field names follow PRODUCT.md's
 * response. A value the service does not know is `null`, never a guess.
 */

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

export const ipFactsSchema = z.object({
  address: z.string().meta({ description: 'Canonical text; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is its IPv4 address.' }),
  version: z.union([z.literal(4), z.literal(6)]),
  embedded_ipv4: nullable(z.string()).meta({
    description: 'The IPv4 client address this IPv6 address carries (IPv4-compatible, SIIT, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4, Teredo). ' +
      'It is checked against the lists and the anonymity data too (either listed is listed), and geolocation, ASN and is_bogon are its. `null` when none.',
  }),
  transition: nullable(z.enum(IPV4_TRANSITIONS)).meta({ description: 'The IPv6 transition mechanism whose address layout carries `embedded_ipv4`.' }),
  country_code: nullable(z.string()),
  country: nullable(z.string()),
  region: nullable(z.string()),
  city: nullable(z.string()),
  postal_code: nullable(z.string()),
  latitude: nullable(z.number()),
  longitude: nullable(z.number()),
  accuracy_radius_km: nullable(z.number()),
  time_zone: nullable(z.string()),
  asn: nullable(z.number().int()),
  as_organization: nullable(z.string()),
  is_tor: nullable(z.boolean()),
  is_proxy: nullable(z.boolean()),
  is_datacenter: nullable(z.boolean()),
  is_vpn: nullable(z.boolean()),
  is_bogon: nullable(z.boolean()),
});

export type IpFacts = z.infer<typeof ipFactsSchema>;

export interface IpInspector extends Resource {
  /** Everything known about an address, from local data only. Never throws. */
  inspect(ip: ParsedIp): Report<IpFacts>;
}
