import { describe, expect, it } from 'vitest';
import { ipIdentifier } from '../../src/history/recorder.js';
import { parseIp, type ParsedIp } from '../../src/ip/address.js';

const id = (text: string) => ipIdentifier(parseIp(text) as ParsedIp);

/** What `history.ip` counts an address as: the client, whatever spelling carries it. */
describe('the identifier history counts an address by', () => {
  it('is an IPv4 address itself, and a plain IPv6 address\'s /64', () => {
    expect(id('81.2.69.160')).toBe('81.2.69.160');
    expect(id('2a01:4f8:1c1c:abcd:1:2:3:4')).toBe('2a0104f8:1c1cabcd::/64');
    expect(id('2a01:4f8:1c1c:abcd:ffff::1')).toBe(id('2a01:4f8:1c1c:abcd:1:2:3:4'));
    // A compressed address whose `::` falls inside the first four groups: 2a01:0:0:1234:…
    expect(id('2a01::1234:5678:9abc:def0:1')).toBe('2a010000:1234::/64');
  });

  it('is the IPv4 client an IPv6 address carries: two clients behind one NAT64 prefix are two, one client in two spellings is one', () => {
    expect(id('64:ff9b::5102:45a0')).toBe('81.2.69.160');
    expect(id('64:ff9b::5102:45a1')).toBe('81.2.69.161');
    expect(id('2002:5102:45a0::1')).toBe('81.2.69.160');
    expect(id('::ffff:81.2.69.160')).toBe('81.2.69.160');
  });
});
