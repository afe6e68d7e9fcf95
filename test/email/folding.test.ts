import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalAddress } from '../../src/email/canonical.js';
import { isRoleAccount } from '../../src/email/role.js';
import { suggestDomain, withinOneEdit } from '../../src/email/typo.js';

const NONE_KNOWN = { has: () => false };

describe('canonicalAddress', () => {
  it.each([
    ['J.Doe+shop@gmail.com', 'jdoe@gmail.com'],
    ['j.d.o.e@googlemail.com', 'jdoe@gmail.com'],
    ['Jane.Doe+x@outlook.com', 'jane.doe@outlook.com'],
    ['jane+tag@proton.me', 'jane@proton.me'],
    ['Jane.Doe+x@example.com', 'jane.doe+x@example.com'],
    ['+only@gmail.com', '+only@gmail.com'],
  ])('%s → %s', (address, expected) => {
    const [local, domain] = address.split('@') as [string, string];
    expect(canonicalAddress({ local, domain })).toBe(expected);
  });
});

describe('isRoleAccount', () => {
  it.each(['admin', 'Postmaster', 'no-reply', 'noreply+bounces', 'info', 'abuse'])('flags %s', (local) => {
    expect(isRoleAccount(local)).toBe(true);
  });
  it.each(['sales', 'hello', 'team', 'jane', 'office', 'administrator.jane'])('leaves %s alone', (local) => {
    expect(isRoleAccount(local)).toBe(false);
  });
});

describe('suggestDomain', () => {
  it.each([
    ['gmial.com', 'gmail.com'],
    ['gmai.com', 'gmail.com'],
    ['gmaill.com', 'gmail.com'],
    ['gmail.co', 'gmail.com'],
    ['gmail.con', 'gmail.com'],
    ['hotmial.com', 'hotmail.com'],
    ['yaho.com', 'yahoo.com'],
    ['outlok.com', 'outlook.com'],
    ['iclod.com', 'icloud.com'],
  ])('suggests %s → %s', (domain, expected) => {
    expect(suggestDomain(domain, NONE_KNOWN)).toBe(expected);
  });

  it.each(['gmail.com', 'googlemail.com', 'example.com', 'mo.com', 'gmx.at', 'hotmail.de', 'yahoo.de'])('does not correct %s', (domain) => {
    expect(suggestDomain(domain, NONE_KNOWN)).toBeNull();
  });

  it('never corrects a domain known as a real provider, however close to a major one', () => {
    const known = new Set(['ymail.com', 'mail.com']);
    expect(suggestDomain('ymail.com', known)).toBeNull();
    expect(suggestDomain('mail.com', known)).toBeNull();
    expect(suggestDomain('ymail.com', NONE_KNOWN)).toBe('gmail.com');
  });

  it.each([
    ['gmial.com', 'gmail.com', true], // a swap of neighbours
    ['gmai.com', 'gmail.com', true], // a deletion
    ['gmaill.com', 'gmail.com', true], // an insertion
    ['gmail.con', 'gmail.com', true], // a substitution
    ['gmail.com', 'gmail.com', true],
    ['gmali.co', 'gmail.com', false],
    ['igmal.com', 'gmail.com', false], // two swaps apart
    ['abc', 'xyz', false],
    ['gmail.com', 'gmail.comxx', false],
  ] as const)('%s is within one edit of %s: %s', (a, b, expected) => {
    expect(withinOneEdit(a, b)).toBe(expected);
    expect(withinOneEdit(b, a)).toBe(expected);
  });

  it('agrees with the optimal string alignment distance on any pair of strings', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '.'), maxLength: 6 });
    fc.assert(
      fc.property(word, word, (a, b) => {
        expect(withinOneEdit(a, b)).toBe(osaDistance(a, b) <= 1);
      }),
      { numRuns: 5_000 },
    );
  });
});

/** The textbook dynamic programme, as the reference. */
function osaDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
