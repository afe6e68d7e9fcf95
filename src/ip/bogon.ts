import type { ParsedIp } from './address.js';
import { compareWords, keyOf, parseNetwork, type IpKey, type IpRange } from './numeric.js';
import { IpRangeTable } from './ranges.js';

/**
 * Addresses no user on the public Internet can have: a caller sending one is usually sending its
 * own proxy's or load balancer's address. From the IANA special-purpose registries
 * (https://www.iana.org/assignments/iana-ipv4-special-registry, .../iana-ipv6-special-registry),
 * the blocks that are not globally reachable, plus multicast and reserved space.
 */
const BOGON_NETWORKS = [
  '0.0.0.0/8', // "this network", RFC 791
  '10.0.0.0/8', // private, RFC 1918
  '100.64.0.0/10', // carrier-grade NAT, RFC 6598
  '127.0.0.0/8', // loopback, RFC 1122
  '169.254.0.0/16', // link-local, RFC 3927
  '172.16.0.0/12', // private, RFC 1918
  '192.0.0.0/24', // IETF protocol assignments, RFC 6890
  '192.0.2.0/24', // documentation TEST-NET-1, RFC 5737
  '192.88.99.0/24', // deprecated 6to4 relay anycast, RFC 7526
  '192.168.0.0/16', // private, RFC 1918
  '198.18.0.0/15', // benchmarking, RFC 2544
  '198.51.100.0/24', // documentation TEST-NET-2, RFC 5737
  '203.0.113.0/24', // documentation TEST-NET-3, RFC 5737
  '224.0.0.0/4', // multicast, RFC 5771
  '240.0.0.0/4', // reserved, RFC 1112 (includes 255.255.255.255, limited broadcast)
  // IPv6: everything outside global unicast 2000::/3 is unassigned, special or multicast
  // (RFC 4291): unspecified, loopback, NAT64 (the client is the embedded IPv4: isBogonAddress), discard-only
  // (RFC 6666), unique local fc00::/7 (RFC 4193), link-local fe80::/10, multicast ff00::/8.
  '::/3',
  '4000::/2',
  '8000::/1',
  '2001:2::/48', // benchmarking, RFC 5180
  '2001:10::/28', // deprecated ORCHID, RFC 4843
  '2001:db8::/32', // documentation, RFC 3849
  '3fff::/20', // documentation, RFC 9637
];

const ranges: IpRange[] = BOGON_NETWORKS.map((network) => {
  const range = parseNetwork(network);
  if (range === null) throw new Error(`bogon table: "${network}" is not a network`);
  return range;
});

const table = (() => {
  const builder = IpRangeTable.builder<true>();
  for (const range of ranges) builder.add(range, true);
  return builder.build('merge');
})();

export function isBogon(ip: IpKey): boolean {
  return table.has(ip);
}

/**
 * Whether any address of `range` is a bogon: the range and a bogon block overlap. Not the same as
 * testing its first and last address: `172.0.0.0/8` begins and ends in public space but holds
 * 172.16.0.0/12. A list of Internet servers has no business covering any of it.
 */
export function overlapsBogon(range: IpRange): boolean {
  return ranges.some((b) => {
    if (b.version === 4 && range.version === 4) return range.start <= b.end && b.start <= range.end;
    if (b.version === 6 && range.version === 6) return compareWords(range.start, 0, b.end, 0) <= 0 && compareWords(b.start, 0, range.end, 0) <= 0;
    return false;
  });
}

/**
 * Whether the client is unroutable: for an IPv6 address that carries an IPv4 client address
 * (NAT64, 6to4...), whether that address is. The NAT64 prefixes themselves lie in `::/3`.
 */
export function isBogonAddress(ip: ParsedIp): boolean {
  return isBogon(keyOf(ip.embedded ?? ip));
}
