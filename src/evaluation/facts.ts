import { z } from 'zod';
import { IPV4_TRANSITIONS } from '../ip/embedded.js';

/**
 * The enrichment contract: what the e-mail and IP steps report, and what rules read. Written once,
 * as zod schemas: they type the code here and document the response in the OpenAPI document.
 * Field names follow PRODUCT.md's response. A value the service does not know is `null`, never a guess.
 */

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

export const emailFactsSchema = z.object({
  address: z.string().meta({ description: 'As sent.' }),
  normalized: z.string().meta({ description: 'Local part as sent, lower-cased domain with IDN as punycode.' }),
  domain: z.string(),
  canonical: z.string().meta({ description: "One person's many addresses fold to this form (provider-aware dots and +tags)." }),
  deliverable: nullable(z.boolean()).meta({ description: '`null` when deliverability could not be decided.' }),
  deliverability: z.enum(['deliverable', 'undeliverable', 'unknown']),
  mx_records: nullable(z.array(z.object({ exchange: z.string(), priority: z.number().int() }))).meta({
    description:
      'At most the 10 most preferred MX records, lowest priority first; when deliverable, only the hosts that can take mail. `[]` without MX records; `null` when unknown.',
  }),
  disposable: nullable(z.boolean()),
  free_provider: nullable(z.boolean()),
  role_account: nullable(z.boolean()),
  relay: nullable(z.boolean()).meta({ description: 'A forwarding service (SimpleLogin, Firefox Relay, Hide My Email…): a real person, not a throw-away box.' }),
  suggested_domain: nullable(z.string()).meta({ description: 'A likely intended domain when this one looks like a typo of a major provider.' }),
});

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

export type EmailFacts = z.infer<typeof emailFactsSchema>;
export type IpFacts = z.infer<typeof ipFactsSchema>;
export type Deliverability = EmailFacts['deliverability'];
export type MxRecord = NonNullable<EmailFacts['mx_records']>[number];

/**
 * A step's answer: its facts plus the names of the checks it could not run
 * (e.g. `email.mx` when DNS timed out, `ip.geo` when no database is loaded).
 */
export interface Report<F> {
  facts: F;
  unavailable: string[];
}

/** Where a data source stands, for `/readyz` and the start-up log. */
export interface SourceStatus {
  /** Stable name, e.g. `ip.city`, `email.disposable`. */
  name: string;
  /** File it was read from, or the bundled package it came from. */
  source: string | null;
  /** E.g. `GeoLite2-City`, `list`. */
  type: string;
  loaded: boolean;
  /** ISO-8601 build date of the data, where known. */
  build_date: string | null;
  entries: number | null;
  /** Why the last load or reload was refused, if it was. */
  error: string | null;
  /** Lines or rows skipped as malformed in the loaded copy, for sources that count them. */
  malformed?: number;
  /** Rows cut or dropped because they overlapped an earlier row, for sources that count them. */
  overlapping?: number;
}
