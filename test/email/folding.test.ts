import { describe, expect, it } from 'vitest';
import { canonicalAddress } from '../../src/email/canonical.js';
import { isRoleAccount } from '../../src/email/role.js';
import { editDistance, suggestDomain } from '../../src/email/typo.js';

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
    expect(suggestDomain(domain)).toBe(expected);
  });

  it.each(['gmail.com', 'googlemail.com', 'example.com', 'mo.com', 'gmx.at', 'hotmail.de', 'yahoo.de'])('does not correct %s', (domain) => {
    expect(suggestDomain(domain)).toBeNull();
  });

  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('gmial.com', 'gmail.com', 2)).toBe(1);
    expect(editDistance('abc', 'xyz', 1)).toBe(2);
  });
});
