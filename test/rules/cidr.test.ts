import { describe, expect, it } from 'vitest';
import { addressKey, parseCidrRanges, type CidrRanges } from '../../src/rules/cidr.js';

const ranges = (...texts: string[]): CidrRanges => {
  const parsed = parseCidrRanges(texts);
  if ('invalid' in parsed) throw new Error(`invalid: ${texts[parsed.invalid]}`);
  return parsed;
};

describe('parseCidrRanges and addressKey', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.0', false],
    ['81.2.69.160/27', '81.2.69.191', true],
    ['81.2.69.160/27', '81.2.69.192', false],
    ['0.0.0.0/0', '255.255.255.255', true],
    ['192.0.2.7', '192.0.2.7', true],
    ['192.0.2.7', '192.0.2.8', false],
    ['10.1.2.3/8', '10.200.0.1', true], // host bits below the prefix are ignored
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['2001:db8::/33', '2001:db8:8000::1', false],
    ['::/0', '10.0.0.1', false],
    ['0.0.0.0/0', '2001:db8::1', false],
    // Issue 11: an IPv4-mapped network is its IPv4 network, as an IPv4-mapped address is its IPv4 address.
    ['::ffff:203.0.113.0/120', '203.0.113.77', true],
    ['::ffff:203.0.113.0/120', '203.0.114.1', false],
    ['::ffff:203.0.113.0/120', '::ffff:203.0.113.77', true],
    ['::ffff:cb00:7100/120', '203.0.113.1', true],
    ['203.0.113.0/24', '::ffff:203.0.113.9', true],
  ])('%s holds %s: %s', (cidr, address, expected) => {
    expect(ranges(cidr).has(addressKey(address)!)).toBe(expected);
  });

  it('holds an address in any of several ranges, IPv4 and IPv6 mixed', () => {
    const set = ranges('10.0.0.0/8', '2001:db8::/32', '192.0.2.7');
    expect(['10.1.1.1', '2001:db8::5', '192.0.2.7'].map((a) => set.has(addressKey(a)!))).toEqual([true, true, true]);
    expect(['11.1.1.1', '2001:db9::5', '192.0.2.8'].map((a) => set.has(addressKey(a)!))).toEqual([false, false, false]);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/', '10.0.0/8', '2001:db8::/129', '1.2.3.4/8/8', 'x/8', '10.0.0.0/08x', 'fe80::1%eth0/64', '01.2.3.4/8'])(
    'refuses %s, saying which',
    (text) => {
      expect(parseCidrRanges(['10.0.0.0/8', text])).toEqual({ invalid: 1 });
    },
  );

  it.each(['example.com', '256.1.1.1', '01.2.3.4', '1.2.3', '10.0.0.0/8', '::1::2'])('has no key for %s, which is not an address', (text) => {
    expect(addressKey(text)).toBeNull();
  });
});
