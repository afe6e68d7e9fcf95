import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeAnyDomain, normalizeDomain, parseEmail } from '../../src/email/address.js';
import { ACCEPTED, REFUSED } from './syntax-vectors.js';

describe('parseEmail', () => {
  it('keeps the address as sent and normalises the domain', () => {
    expect(parseEmail('Jane.Doe+news@Example.COM')).toEqual({
      address: 'Jane.Doe+news@Example.COM',
      local: 'Jane.Doe+news',
      domain: 'example.com',
      normalized: 'Jane.Doe+news@example.com',
    });
  });

  it('turns an internationalised domain into punycode', () => {
    expect(parseEmail('jose@correo.españa.es')).toMatchObject({ domain: 'correo.xn--espaa-rta.es' });
    expect(parseEmail('user@BÜCHER.de')).toMatchObject({ domain: 'xn--bcher-kva.de' });
  });

  it.each([
    ['no @', 'jane.example.com'],
    ['two @', 'a@b@example.com'],
    ['an empty local part', '@example.com'],
    ['a local part over 64 characters', `${'a'.repeat(65)}@example.com`],
    ['a local part of 22 characters and 66 octets', `${'ü'.repeat(33)}@example.com`],
    ['an address of 254 characters but 256 octets', `${'ü'.repeat(32)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}.com`],
    ['a trailing dot on the domain', 'jane@example.com.'],
    ['a space', 'jane doe@example.com'],
    ['a leading dot', '.jane@example.com'],
    ['two dots in a row', 'jane..doe@example.com'],
    ['a single-label domain', 'jane@localhost'],
    ['an IP literal', 'jane@[192.0.2.1]'],
    ['a numeric TLD', 'jane@192.0.2.1'],
    ['a label starting with a hyphen', 'jane@-example.com'],
    ['an empty domain', 'jane@'],
    ['over 254 characters', `jane@${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`],
  ])('rejects %s', (_label, address) => {
    expect(parseEmail(address)).toHaveProperty('error');
  });

  it('refuses a quoted local part, saying so', () => {
    expect(parseEmail('"jane..doe"@example.com')).toEqual({ error: 'local part must not be quoted' });
  });

  it('accepts 64 octets of non-ASCII in the local part', () => {
    expect(parseEmail(`${'ü'.repeat(32)}@example.com`)).toHaveProperty('domain', 'example.com');
  });

  it.each(REFUSED.map((v) => [v.source, v.why, v.address] as const))('refuses the %s vector with %s', (_source, _why, address) => {
    expect(parseEmail(address)).toHaveProperty('error');
  });

  it.each(ACCEPTED.map((v) => [v.source, v.why, v.address] as const))('accepts the %s vector with %s', (_source, _why, address) => {
    expect(parseEmail(address)).not.toHaveProperty('error');
  });
});

describe('normalizeDomain', () => {
  it('lower-cases and removes one trailing dot', () => {
    expect(normalizeDomain('Mail.Example.ORG.')).toBe('mail.example.org');
  });
  it('refuses what DNS could not resolve', () => {
    expect(normalizeDomain('exa mple.com')).toBeNull();
    expect(normalizeDomain(`${'a'.repeat(64)}.com`)).toBeNull();
  });
});

describe('the shortcut for plain domains', () => {
  it('gives the answer of the general path for every string', () => {
    // Strings made of what the shortcut looks at (labels, dots, hyphens, digits, "xn--", upper case,
    // a trailing dot) hit its edges far more often than arbitrary text; real domains come too.
    const piece = fc.constantFrom('a', 'z', '0', '9', '-', '.', 'xn--', 'A', 'é', '--', 'a'.repeat(63), '1'.repeat(64));
    const candidate = fc.oneof(fc.array(piece, { maxLength: 12 }).map((p) => p.join('')), fc.domain(), fc.string(), fc.constant(`${'a'.repeat(60)}.`.repeat(5)));
    fc.assert(
      fc.property(candidate, (raw) => {
        expect(normalizeDomain(raw)).toBe(normalizeAnyDomain(raw));
      }),
      { numRuns: 20_000 },
    );
  });
});
