import { describe, expect, it } from 'vitest';
import { addressBytes, cidrContains, parseCidr } from '../../src/rules/cidr.js';

describe('addressBytes', () => {
  it.each([
    ['1.2.3.4', [1, 2, 3, 4]],
    ['::1', [...Array(15).fill(0), 1]],
    ['2001:db8::ff00:42:8329', [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0x00, 0x00, 0x42, 0x83, 0x29]],
    ['::ffff:1.2.3.4', [...Array(10).fill(0), 0xff, 0xff, 1, 2, 3, 4]],
    ['fe80::', [0xfe, 0x80, ...Array(14).fill(0)]],
  ])('%s', (text, bytes) => {
    expect([...addressBytes(text)!]).toEqual(bytes);
  });

  it.each(['example.com', '256.1.1.1', '01.2.3.4', '1.2.3', '1.2.3.4.5', '::1::2'])('is null for %s, which is not an address', (text) => {
    expect(addressBytes(text)).toBeNull();
  });
});

describe('parseCidr and cidrContains', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.0', false],
    ['81.2.69.160/27', '81.2.69.191', true],
    ['81.2.69.160/27', '81.2.69.192', false],
    ['0.0.0.0/0', '255.255.255.255', true],
    ['192.0.2.7', '192.0.2.7', true],
    ['192.0.2.7', '192.0.2.8', false],
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['2001:db8::/33', '2001:db8:8000::1', false],
    ['::/0', '10.0.0.1', false],
  ])('%s holds %s: %s', (cidr, address, expected) => {
    expect(cidrContains(parseCidr(cidr)!, addressBytes(address)!)).toBe(expected);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/', '10.0.0/8', '2001:db8::/129', '1.2.3.4/8/8', 'x/8', '10.0.0.0/08x'])('refuses %s', (text) => {
    expect(parseCidr(text)).toBeNull();
  });
});
