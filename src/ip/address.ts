import { isIP } from 'node:net';
import { embeddedIpv4, mayCarryIpv4, type Ipv4Transition } from './embedded.js';
import { ipv6ToWords, numberToIpv4 } from './numeric.js';

export interface ParsedIp {
  /** Canonical text: an IPv4-mapped IPv6 address becomes its IPv4 address. */
  address: string;
  version: 4 | 6;
  /**
   * The IPv4 client address an IPv6 address carries (NAT64, 6to4, Teredo...: see `embeddedIpv4`),
   * checked as well, so a listed address cannot hide inside one; `null` when it carries none.
   */
  embedded: EmbeddedIpv4 | null;
}

export interface EmbeddedIpv4 extends ParsedIp {
  version: 4;
  embedded: null;
  /** The transition mechanism whose address layout carries it. */
  via: Ipv4Transition;
}

/**
 * Validates before any look-up: the `maxmind` reader does not (`get("1.2.3")` returns a record).
 * Zone ids (`fe80::1%eth0`) and brackets are refused: they name an interface, not a user.
 */
export function parseIp(value: string): ParsedIp | { error: string } {
  const version = isIP(value);
  if (version === 4) {
    // Node accepts only dotted-quad decimal without leading zeros, which is what we want.
    return { address: value, version: 4, embedded: null };
  }
  if (version === 6) {
    if (value.includes('%')) return { error: 'must not carry an IPv6 zone id' };
    // WHATWG URL parsing gives the canonical (RFC 5952) text, so one address has one spelling.
    const canonical = new URL(`http://[${value}]/`).hostname.slice(1, -1);
    if (!mayCarryIpv4(canonical)) return { address: canonical, version: 6, embedded: null };
    const words = ipv6ToWords(canonical, WORDS);
    // ::ffff:a.b.c.d (RFC 4291 section 2.5.5.2) is an IPv4 address on a dual-stack socket: it is one.
    if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { address: numberToIpv4(words[3]!), version: 4, embedded: null };
    const carried = embeddedIpv4(words);
    return {
      address: canonical,
      version: 6,
      embedded: carried === null ? null : { address: numberToIpv4(carried.ipv4), version: 4, embedded: null, via: carried.via },
    };
  }
  return { error: 'must be an IPv4 or IPv6 address' };
}

/** Scratch words: read before the next call. */
const WORDS = new Uint32Array(4);
