import type { ParsedEmail } from '../email/address.js';
import { canonicalAddress } from '../email/canonical.js';
import { isRoleAccount } from '../email/role.js';
import { isBogonAddress } from '../ip/bogon.js';
import type { ParsedIp } from '../ip/address.js';
import type { EmailFacts } from '../email/facts.js';
import type { IpFacts } from '../ip/facts.js';
import type { Report } from '../core/ports.js';

/** What is known of an e-mail address when no check could run: what its spelling alone tells. */
export function unknownEmail(email: ParsedEmail, reason: string[]): Report<EmailFacts> {
  return {
    facts: {
      address: email.address,
      normalized: email.normalized,
      domain: email.domain,
      canonical: canonicalAddress(email),
      deliverable: null,
      deliverability: 'unknown',
      mx_records: null,
      disposable: null,
      free_provider: null,
      role_account: isRoleAccount(email.local),
      relay: null,
      suggested_domain: null,
    },
    unavailable: reason,
  };
}

/** What is known of an IP address when no data could be read: what it carries, and whether it is routable at all. */
export function unknownIp(ip: ParsedIp, reason: string[]): Report<IpFacts> {
  return {
    facts: {
      address: ip.address,
      version: ip.version,
      embedded_ipv4: ip.embedded?.address ?? null,
      transition: ip.embedded?.via ?? null,
      country_code: null, country: null, region: null, city: null, postal_code: null,
      latitude: null, longitude: null, accuracy_radius_km: null, time_zone: null,
      asn: null, as_organization: null,
      is_tor: null, is_proxy: null, is_datacenter: null, is_vpn: null, is_bogon: isBogonAddress(ip),
    },
    unavailable: reason,
  };
}
