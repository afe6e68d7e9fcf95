import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIp, type ParsedIp } from '../../src/ip/address.js';
import { isBogon } from '../../src/ip/bogon.js';
import { ipv6ToWords, keyOf, numberToIpv4, parseNetwork } from '../../src/ip/numeric.js';
import { IpRangeTable } from '../../src/ip/ranges.js';

const ip = (text: string): ParsedIp => {
  const parsed = parseIp(text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
};
const key = (text: string) => keyOf(ip(text));

describe('address numbers', () => {
  it('reads IPv6 text in every spelling', () => {
    const hex = (s: string) => [...ipv6ToWords(s)].map((w) => w.toString(16));
    expect(hex('::')).toEqual(['0', '0', '0', '0']);
    expect(hex('::1')).toEqual(['0', '0', '0', '1']);
    expect(hex('1::')).toEqual(['10000', '0', '0', '0']);
    expect(hex('2001:db8::1')).toEqual(['20010db8', '0', '0', '1']);
    expect(hex('1:2:3:4:5:6:7:8')).toEqual(['10002', '30004', '50006', '70008']);
    expect(hex('::ffff:1.2.3.4')).toEqual(['0', '0', 'ffff', '1020304']);
    expect(hex('fe80::1:2:3:4:5:6')).toEqual(['fe800000', '10002', '30004', '50006']);
    expect(hex('2001:DB8::A')).toEqual(['20010db8', '0', '0', 'a']);
  });

  it('reads networks, masking host bits and refusing nonsense', () => {
    expect(parseNetwork('10.1.2.3/8')).toEqual({ version: 4, start: 0x0a000000, end: 0x0affffff });
    expect(parseNetwork('0.0.0.0/0')).toEqual({ version: 4, start: 0, end: 0xffffffff });
    expect(parseNetwork('1.2.3.4')).toEqual({ version: 4, start: 0x01020304, end: 0x01020304 });
    expect(parseNetwork('::ffff:1.2.3.0/120')).toEqual({ version: 4, start: 0x01020300, end: 0x010203ff });
    const v6 = parseNetwork('2001:db8::1/33');
    expect(v6?.version).toBe(6);
    expect([...(v6!.start as Uint32Array)]).toEqual([0x20010db8, 0, 0, 0]);
    expect([...(v6!.end as Uint32Array)]).toEqual([0x20010db8, 0x7fffffff, 0xffffffff, 0xffffffff]);
    for (const bad of ['1.2.3', '1.2.3.4/33', '::/129', '1.2.3.4/', '1.2.3.4/x', 'fe80::1%eth0', 'example.com', '']) {
      expect(parseNetwork(bad)).toBeNull();
    }
  });
});

describe('range table', () => {
  it('finds an address in O(log n) among disjoint, nested and adjacent ranges (IPv4 and IPv6)', () => {
    const builder = IpRangeTable.builder<true>();
    for (const n of ['10.0.0.0/8', '10.1.0.0/16', '11.0.0.0/8', '192.0.2.1', '2001:db8::/32', '2001:db8:1::/48', '2c0f::/16']) {
      builder.add(parseNetwork(n)!, true);
    }
    const table = builder.build('merge');
    expect(table.size).toBe(4); // 10/8 + 11/8 merge; the /16 and /48 fold into their parents
    for (const hit of ['10.0.0.0', '10.255.255.255', '11.3.3.3', '192.0.2.1', '2001:db8::', '2001:db8:ffff::1', '2c0f:ffff::1']) {
      expect(table.has(key(hit)), hit).toBe(true);
    }
    for (const miss of ['9.255.255.255', '12.0.0.0', '192.0.2.0', '192.0.2.2', '2001:db7::1', '2001:db9::', '::', '0.0.0.0']) {
      expect(table.has(key(miss)), miss).toBe(false);
    }
  });

  it('keeps values apart and, of overlapping ranges, the first', () => {
    const builder = IpRangeTable.builder<number>();
    builder.add(parseNetwork('1.0.0.0/24')!, 13335);
    builder.add(parseNetwork('1.0.1.0/24')!, 13335);
    builder.add(parseNetwork('1.0.0.128/25')!, 64500);
    builder.add(parseNetwork('2001:db8::/32')!, 64501);
    const table = builder.build('first');
    expect(builder.overlapping).toBe(1);
    expect(table.get(key('1.0.0.200'))).toBe(13335);
    expect(table.get(key('1.0.1.1'))).toBe(13335);
    expect(table.get(key('2001:db8::9'))).toBe(64501);
    expect(table.get(key('1.0.2.0'))).toBeUndefined();
  });

  it('cuts a range that partly overlaps an earlier one to what lies beyond it, IPv4 and IPv6', () => {
    // As in the bundled ASN data: 214.95.0.0-215.0.255.255 (AS749), then 215.0.0.0-215.1.3.255 (AS721).
    const builder = IpRangeTable.builder<number>();
    builder.addV4(0xd65f0000, 0xd700ffff, 749);
    builder.addV4(0xd7000000, 0xd70103ff, 721);
    builder.add(parseNetwork('2001:db8::/33')!, 64500);
    builder.add(parseNetwork('2001:db8:7fff:ffff::/64')!, 64501); // inside: dropped
    builder.add(parseNetwork('2001:db8:7fff:ffff:ffff:ffff:ffff:ff00/120')!, 64502); // inside: dropped
    builder.add(parseNetwork('2001:db8:7fff:ffff:ffff:ffff:ffff:ff00/120')!, 64500); // same value, inside: dropped
    const table = builder.build('first');
    expect(builder.overlapping).toBe(4);
    expect(table.get(key('215.0.200.1'))).toBe(749);
    expect(table.get(key('215.1.0.0'))).toBe(721);
    expect(table.get(key('215.1.3.255'))).toBe(721);
    expect(table.get(key('215.1.4.0'))).toBeUndefined();

    const v6 = IpRangeTable.builder<number>();
    v6.add(parseNetwork('2001:db8::/33')!, 64500);
    v6.add(parseNetwork('2001:db8::/32')!, 64501); // the upper half, from 2001:db8:8000:: on
    const cut = v6.build('first');
    expect(v6.overlapping).toBe(1);
    expect(cut.get(key('2001:db8:7fff:ffff:ffff:ffff:ffff:ffff'))).toBe(64500);
    expect(cut.get(key('2001:db8:8000::'))).toBe(64501);
    expect(cut.get(key('2001:db8:ffff::1'))).toBe(64501);
  });

  it('gives each address the value of the first-starting range that covers it (random IPv4 and IPv6 ranges)', () => {
    // Arbitrary ranges (not networks, which only nest) in a small space, so they overlap partly
    // and often. The IPv6 ones straddle a 32-bit word boundary, where a cut must carry.
    const BASE = 2 ** 32 - 500;
    const words = (n: number) => new Uint32Array([0x20010db8, 0, Math.floor((BASE + n) / 2 ** 32), (BASE + n) >>> 0]);
    const row = fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 4 }), fc.boolean());
    fc.assert(
      fc.property(fc.array(row, { maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 1400 }), { minLength: 1, maxLength: 40 }), (rows, probes) => {
        const builder = IpRangeTable.builder<number>();
        for (const [start, length, value, six] of rows) {
          if (six) builder.addV6(words(start), words(start + length), value);
          else builder.addV4(start, start + length, value);
        }
        const table = builder.build('first');
        for (const p of probes) {
          for (const six of [false, true]) {
            const first = rows
              .map(([start, length, value, isSix], order) => ({ start, end: start + length, value, isSix, order }))
              .filter((r) => r.isSix === six && r.start <= p && p <= r.end)
              .sort((x, y) => x.start - y.start || x.order - y.order)[0];
            const probe = six ? { version: 6 as const, v4: 0, v6: words(p) } : { version: 4 as const, v4: p, v6: new Uint32Array(0) };
            expect(table.get(probe)).toBe(first?.value);
          }
        }
      }),
    );
  });

  it('agrees with a linear scan on random IPv4 ranges', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 8, max: 32 })), { maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 1, maxLength: 40 }),
        (networks, probes) => {
          const ranges = networks.map(([a, bits]) => parseNetwork(`${numberToIpv4(a)}/${bits}`)!);
          const builder = IpRangeTable.builder<true>();
          for (const r of ranges) builder.add(r, true);
          const table = builder.build('merge');
          for (const p of probes) {
            const expected = ranges.some((r) => r.version === 4 && r.start <= p && p <= r.end);
            expect(table.has({ version: 4, v4: p, v6: new Uint32Array(0) })).toBe(expected);
          }
        },
      ),
    );
  });
});

describe('bogons', () => {
  it('flags private, loopback, link-local, CGNAT, documentation, multicast and reserved addresses', () => {
    for (const a of [
      '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '127.0.0.1', '169.254.1.1', '100.64.0.1', '100.127.255.255',
      '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
      '0.0.0.0', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '2001:db8::1', '3fff::1', '64:ff9b::1.2.3.4',
    ]) {
      expect(isBogon(key(a)), a).toBe(true);
    }
  });

  it('does not flag public addresses', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '81.2.69.142', '2001:4860:4860::8888', '2a00:1450::1']) {
      expect(isBogon(key(a)), a).toBe(false);
    }
  });

  it('reads an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(isBogon(key('::ffff:10.0.0.1'))).toBe(true);
    expect(isBogon(key('::ffff:8.8.8.8'))).toBe(false);
  });
});
