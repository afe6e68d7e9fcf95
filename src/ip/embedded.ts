/**
 * IPv6 addresses that carry an IPv4 client address, by the transition mechanisms' own layouts.
 * The service checks that IPv4 address against the lists and the anonymity data as well as the
 * IPv6 address (either listed is listed), and reads geolocation, ASN and bogon status for it: it
 * is where the client is on the IPv4 Internet, while the IPv6 prefix belongs to a translator or a
 * relay (docs/data.md, "Addresses that carry an IPv4 address").
 */
export const IPV4_TRANSITIONS = ['ipv4_compatible', 'siit', 'nat64', '6to4', 'teredo'] as const;
export type Ipv4Transition = (typeof IPV4_TRANSITIONS)[number];

/**
 * Whether an IPv6 address in canonical text (RFC 5952) can carry an IPv4 address or be IPv4-mapped:
 * a cheap test that spares the common address (2a00:..., 2600:...) being read into words.
 */
export function mayCarryIpv4(canonical: string): boolean {
  return canonical.startsWith('::') || canonical.startsWith('64:ff9b:') || canonical.startsWith('2002:') ||
    canonical.startsWith('2001:0:') || canonical.startsWith('2001::');
}

/**
 * The IPv4 address carried in an IPv6 address given as four 32-bit words (most significant
 * first), or `null`. IPv4-mapped `::ffff:0:0/96` is not here: that address *is* an IPv4 address.
 */
export function embeddedIpv4(words: Uint32Array): { ipv4: number; via: Ipv4Transition } | null {
  const w0 = words[0]!;
  const w1 = words[1]!;
  const w2 = words[2]!;
  const w3 = words[3]!;
  if (w0 === 0 && w1 === 0) {
    // IPv4-compatible `::a.b.c.d` (RFC 4291 section 2.5.5.1, deprecated). `::` and `::1` are not,
    // nor is anything else in 0.0.0.0/8 ("this network"): none is a client's address.
    if (w2 === 0) return w3 >= 0x01000000 ? { ipv4: w3, via: 'ipv4_compatible' } : null;
    // IPv4-translated `::ffff:0:a.b.c.d`, the address of an IPv4 node to SIIT (RFC 2765 section 2.1).
    return w2 === 0xffff0000 ? { ipv4: w3, via: 'siit' } : null;
  }
  if (w0 === 0x0064ff9b) {
    // The well-known NAT64 prefix 64:ff9b::/96 (RFC 6052 section 2.1): the IPv4 address ends it.
    if (w1 === 0 && w2 === 0) return { ipv4: w3, via: 'nat64' };
    if (w1 >>> 16 === 0x0001) return localUseNat64(w2, w3);
    return null;
  }
  // 6to4 2002:a.b.c.d::/48 (RFC 3056 section 2): the site's IPv4 address follows the prefix.
  if (w0 >>> 16 === 0x2002) return { ipv4: (((w0 & 0xffff) << 16) | (w1 >>> 16)) >>> 0, via: '6to4' };
  // Teredo 2001:0::/32 (RFC 4380 section 4): the server's address, flags, port, then the client's
  // public (NAT) address with every bit inverted. The server is a relay, not the client.
  if (w0 === 0x20010000) return { ipv4: ~w3 >>> 0, via: 'teredo' };
  return null;
}

/**
 * 64:ff9b:1::/48 (RFC 8215) is carved into translation prefixes of the operator's choice, each
 * laid out as RFC 6052 section 2.2 says for its length; the address alone does not name the
 * length. RFC 8215 saw /64 as the shortest in use, so two layouts are read: /96 (the IPv4 address
 * in the last 32 bits) and /64 (bits 64-71 zero, the IPv4 address in bits 72-103, then 24 zero
 * bits). They are told apart by those last 24 bits: under /96 they are the low three octets of
 * the client's address, which no client address has all zero (x.0.0.0).
 */
function localUseNat64(w2: number, w3: number): { ipv4: number; via: 'nat64' } | null {
  if ((w3 & 0x00ffffff) !== 0) return { ipv4: w3, via: 'nat64' };
  if (w2 >>> 24 === 0) return { ipv4: (((w2 & 0x00ffffff) << 8) | (w3 >>> 24)) >>> 0, via: 'nat64' };
  return null;
}
