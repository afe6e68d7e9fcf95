import { describe, expect, it } from 'vitest';
import { isUsableMailHost } from '../../src/email/mail-host.js';

describe('isUsableMailHost', () => {
  it.each([
    'mx1.example.com',
    'gmail-smtp-in.l.google.com',
    'mx.xn--bcher-kva.example',
    '_dmarc-relay.example.org',
    'mx.test',
    'ai', // a top-level domain may be its own mail host
    '1.2.3.example.com',
    'mx.123abc',
  ])('%s is a mail host', (name) => {
    expect(isUsableMailHost(name)).toBe(true);
  });

  it.each([
    ['the null MX', '.'],
    ['a loopback address written as a name', '127.0.0.1'],
    ['the unspecified address', '0.0.0.0'],
    ['a private address', '192.168.1.1'],
    ['a short numeric name', '2130706433'],
    ['an address literal', '[127.0.0.1]'],
    ['an IPv6 address', '::1'],
    ['an IPv6 address', '2001:db8::1'],
    ['localhost', 'localhost'],
    ['a name under localhost', 'mx.localhost'],
    ['a name under invalid', 'mx.example.invalid'],
    ['a multicast DNS name', 'printer.local'],
    ['a name with a space', 'mx .example.com'],
    ['an empty label', 'mx..example.com'],
    ['a label over 63 characters', `${'a'.repeat(64)}.example.com`],
    ['a name over 253 characters', `${'a.'.repeat(127)}com`],
    ['a non-ASCII name', 'mx.bücher.example'],
  ])('%s (%s) is not', (_label, name) => {
    expect(isUsableMailHost(name)).toBe(false);
  });
});
