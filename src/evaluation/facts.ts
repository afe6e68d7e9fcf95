/**
 * The enrichment contract: what the e-mail and IP steps report, and what rules read.
 * Field names follow PRODUCT.md's response. A value the service does not know is `null`, never a guess.
 */

export type Deliverability = 'deliverable' | 'undeliverable' | 'unknown';

export interface MxRecord {
  exchange: string;
  priority: number;
}

export interface EmailFacts {
  /** As sent by the caller. */
  address: string;
  /** Local part as sent, lower-cased domain with IDN as punycode. */
  normalized: string;
  /** Lower-cased, punycode, no trailing dot. */
  domain: string;
  /** One person's many addresses fold to one form (provider-aware dots and +tags). */
  canonical: string;
  /** `null` when deliverability is unknown. */
  deliverable: boolean | null;
  deliverability: Deliverability;
  /** `null` when the MX lookup could not complete. */
  mx_records: MxRecord[] | null;
  disposable: boolean | null;
  free_provider: boolean | null;
  role_account: boolean | null;
  relay: boolean | null;
  suggested_domain: string | null;
}

export interface IpFacts {
  address: string;
  version: 4 | 6;
  country_code: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
  postal_code: string | null;
  latitude: number | null;
  longitude: number | null;
  accuracy_radius_km: number | null;
  time_zone: string | null;
  asn: number | null;
  as_organization: string | null;
  is_tor: boolean | null;
  is_proxy: boolean | null;
  is_datacenter: boolean | null;
  is_vpn: boolean | null;
  is_bogon: boolean | null;
}

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
}
