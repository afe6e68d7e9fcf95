import { isIP } from 'node:net';

export interface ParsedIp {
  /** Canonical text: an IPv4-mapped IPv6 address becomes its IPv4 address. */
  address: string;
  version: 4 | 6;
}

/**
 * Validates before any look-up: the `maxmind` reader does not (`get("1.2.3")` returns a record).
 * Zone ids (`fe80::1%eth0`) and brackets are refused: they name an interface, not a user.
 */
export function parseIp(value: string): ParsedIp | { error: string } {
  const version = isIP(value);
  if (version === 4) {
    // Node accepts only dotted-quad decimal without leading zeros, which is what we want.
    return { address: value, version: 4 };
  }
  if (version === 6) {
    if (value.includes('%')) return { error: 'must not carry an IPv6 zone id' };
    // WHATWG URL parsing gives the canonical (RFC 5952) text, so one address has one spelling.
    const canonical = new URL(`http://[${value}]/`).hostname.slice(1, -1);
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
    if (mapped) {
      const hi = parseInt(mapped[1]!, 16);
      const lo = parseInt(mapped[2]!, 16);
      return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, version: 4 };
    }
    return { address: canonical, version: 6 };
  }
  return { error: 'must be an IPv4 or IPv6 address' };
}
