import { describe, expect, it } from 'vitest';
import { addressOfKey, ipKeyRange } from '../../src/store/decisions.js';
import { ipKey } from '../../src/store/log-record.js';

/** The log's IP keys read back as text, and addresses and CIDRs as ranges of them (the search's `ip` filter). */
describe('IP keys of the evaluation log', () => {
  it('reads a key back as the canonical text of its address (IPv4 dotted, IPv6 as RFC 5952 writes it)', () => {
    const cases: Array<[string, string]> = [
      ['203.0.113.7', '203.0.113.7'], ['0.0.0.0', '0.0.0.0'], ['2001:db8::1', '2001:db8::1'], ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
      ['::', '::'], ['::1', '::1'], ['1::', '1::'], ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'], ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], ['2001:db8:1:1:1:1:0:1', '2001:db8:1:1:1:1:0:1'], ['fe80:0:0:0:abcd:ef01:2345:6789', 'fe80::abcd:ef01:2345:6789'],
    ];
    for (const [address, canonical] of cases) expect(addressOfKey(ipKey(address)), address).toBe(canonical);
  });

  it('turns an address or a CIDR of either family into the inclusive range of keys it covers', () => {
    expect(ipKeyRange('203.0.113.7')).toEqual({ start: ipKey('203.0.113.7'), end: ipKey('203.0.113.7') });
    expect(ipKeyRange('203.0.113.9/24')).toEqual({ start: ipKey('203.0.113.0'), end: ipKey('203.0.113.255') });
    // An IPv4-mapped range is the IPv4 range, as the log keys mapped addresses as IPv4.
    expect(ipKeyRange('::ffff:203.0.113.0/120')).toEqual(ipKeyRange('203.0.113.0/24'));
    expect(ipKeyRange('2001:db8::/32')).toEqual({ start: ipKey('2001:db8::'), end: ipKey('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff') });
    expect(ipKeyRange('0.0.0.0/0')).toEqual({ start: ipKey('0.0.0.0'), end: ipKey('255.255.255.255') });
    for (const bad of ['203.0.113.0/33', 'nope', '2001:db8::/129', 'fe80::1%eth0', '']) expect(ipKeyRange(bad), bad).toBeNull();
  });
});
