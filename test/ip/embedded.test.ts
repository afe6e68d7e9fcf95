import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIp } from '../../src/ip/address.js';
import { isBogonAddress } from '../../src/ip/bogon.js';
import { numberToIpv4 } from '../../src/ip/numeric.js';
import { ip, spellings } from './fixtures.js';

const carried = (text: string) => {
  const parsed = ip(text);
  return parsed.embedded && { address: parsed.embedded.address, via: parsed.embedded.via };
};

describe('IPv6 addresses that carry an IPv4 address', () => {
  it('read the examples of the RFCs that define them', () => {
    expect(carried('::192.0.2.33')).toEqual({ address: '192.0.2.33', via: 'ipv4_compatible' }); // RFC 4291 2.5.5.1
    expect(carried('::ffff:0:192.0.2.33')).toEqual({ address: '192.0.2.33', via: 'siit' }); // RFC 2765 2.1
    expect(carried('64:ff9b::192.0.2.33')).toEqual({ address: '192.0.2.33', via: 'nat64' }); // RFC 6052 2.4
    expect(carried('64:ff9b:1:abcd:1234:5678:192.0.2.33')).toEqual({ address: '192.0.2.33', via: 'nat64' }); // RFC 8215, a /96
    expect(carried('64:ff9b:1:122:c0:2:2100:0')).toEqual({ address: '192.0.2.33', via: 'nat64' }); // RFC 8215, a /64 (RFC 6052 2.4's layout)
    expect(carried('2002:c000:221::1')).toEqual({ address: '192.0.2.33', via: '6to4' }); // RFC 3056 2
    expect(carried('2001:0000:4136:e378:8000:63bf:3fff:fdd2')).toEqual({ address: '192.0.2.45', via: 'teredo' }); // RFC 4380 4
  });

  it('find every spelling of any address', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0x01000000, max: 0xffffffff }), (n) => {
        // Under a local-use /96, a client x.0.0.0 would read as a /64 address (docs/data.md): no client has one.
        fc.pre((n & 0xffffff) !== 0);
        const v4 = numberToIpv4(n);
        for (const { text, via } of spellings(v4)) {
          const expected = via === null ? { address: v4, version: 4, embedded: null } : { version: 6, embedded: { address: v4, version: 4, embedded: null, via } };
          expect(ip(text), text).toMatchObject(expected);
          expect(ip(text.toUpperCase()), text).toMatchObject(expected);
        }
      }),
    );
  });

  it('are read only where a mechanism puts one', () => {
    for (const text of [
      '::', '::1', '::2', '::0.255.255.255', // unspecified, loopback, "this network": not IPv4-compatible
      '::ffff:1:1.2.3.4', '::1:0:1.2.3.4', // neither mapped nor translated
      '64:ff9b:2::1.2.3.4', '64:ff9b:0:1::1.2.3.4', '64:ff9b::1:0:1.2.3.4', // other 64:ff9b::/32 space
      '64:ff9b:1:abcd:ff00:102:300:0', // local use, neither a /96 (x.0.0.0) nor a /64 (bits 64-71 set)
      '2001:db8::1', '2001:4860:4860::8888', '2001:1::1', '2003::1', 'fe80::1', '2a02:c7f::1',
    ]) {
      expect(ip(text).embedded, text).toBeNull();
    }
  });

  it('are bogons when the IPv4 client is: the NAT64 prefix alone is not', () => {
    expect(isBogonAddress(ip('64:ff9b::8.8.8.8'))).toBe(false);
    expect(isBogonAddress(ip('::8.8.8.8'))).toBe(false);
    expect(isBogonAddress(ip('64:ff9b::10.0.0.1'))).toBe(true);
    expect(isBogonAddress(ip('2002:c0a8:101::1'))).toBe(true); // 6to4 of 192.168.1.1
    expect(isBogonAddress(ip('::1'))).toBe(true);
    expect(isBogonAddress(ip('64:ff9b::1:0:1.2.3.4'))).toBe(true); // in 64:ff9b::/32, but no layout carries a client
  });

  it('keep the IPv6 address as it was written, canonical', () => {
    expect(parseIp('64:FF9B:0:0:0:0:185.220.101.1')).toMatchObject({ address: '64:ff9b::b9dc:6501', version: 6 });
  });
});
