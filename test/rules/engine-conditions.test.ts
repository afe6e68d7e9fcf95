import { describe, expect, it } from 'vitest';
import { evaluateRuleSet } from '../../src/rules/engine.js';
import type { ConditionInput } from '../../src/rules/file-schema.js';
import { contextOf, ruleSetOf, type ContextOverrides } from './context.js';

/** One custom rule with `when`: did it fire, not fire, or could it not be evaluated? */
function verdict(when: ConditionInput, overrides: ContextOverrides = {}): 'fires' | 'silent' | 'unknown' {
  const outcome = evaluateRuleSet(contextOf(overrides), ruleSetOf({ rules: [{ id: 'r', name: 'R', score: 10, when }] }));
  if (outcome.unavailable.includes('rule:r')) {
    expect(outcome.details).toEqual([]);
    return 'unknown';
  }
  return outcome.details.length === 1 ? 'fires' : 'silent';
}

const domain = (d: string): ContextOverrides => ({ body: { email: `jane@${d}` } });

describe('operators', () => {
  it.each<[string, ConditionInput, ContextOverrides, 'fires' | 'silent' | 'unknown']>([
    ['equals, text', { field: 'email.domain', equals: 'example.com' }, {}, 'fires'],
    ['equals, text, other value', { field: 'email.domain', equals: 'example.org' }, {}, 'silent'],
    ['equals, number', { field: 'ip.asn', equals: 64501 }, {}, 'fires'],
    ['equals, boolean', { field: 'email.free_provider', equals: true }, { email: { free_provider: true } }, 'fires'],
    ['not_equals', { field: 'ip.country_code', not_equals: 'GB' }, { ip: { country_code: 'FR' } }, 'fires'],
    ['not_equals, same value', { field: 'ip.country_code', not_equals: 'GB' }, {}, 'silent'],
    ['in', { field: 'ip.country_code', in: ['FR', 'GB'] }, {}, 'fires'],
    ['in, not listed', { field: 'ip.country_code', in: ['FR', 'DE'] }, {}, 'silent'],
    ['in, numbers', { field: 'ip.asn', in: [1, 64501] }, {}, 'fires'],
    ['not_in', { field: 'ip.country_code', not_in: ['FR', 'DE'] }, {}, 'fires'],
    ['not_in, listed', { field: 'ip.country_code', not_in: ['GB'] }, {}, 'silent'],
    ['gt, above', { field: 'ip.accuracy_radius_km', gt: 19 }, {}, 'fires'],
    ['gt, equal', { field: 'ip.accuracy_radius_km', gt: 20 }, {}, 'silent'],
    ['gte, equal', { field: 'ip.accuracy_radius_km', gte: 20 }, {}, 'fires'],
    ['lt, below', { field: 'ip.latitude', lt: 52 }, {}, 'fires'],
    ['lt, equal', { field: 'ip.latitude', lt: 51.5 }, {}, 'silent'],
    ['lte, equal', { field: 'ip.latitude', lte: 51.5 }, {}, 'fires'],
    ['exists, sent', { field: 'user.user_id', exists: true }, { body: { user: { user_id: 'u1' } } }, 'fires'],
    ['exists, not sent', { field: 'user.user_id', exists: true }, {}, 'silent'],
    ['exists false, not sent', { field: 'device_intelligence.device_hash', exists: false }, {}, 'fires'],
    ['exists false, object sent without the field', { field: 'device_intelligence.device_hash', exists: false }, { body: { device_intelligence: { device_os: 'iOS' } } }, 'fires'],
    ['exists, suggested_domain null is absent, not unknown', { field: 'email.suggested_domain', exists: true }, {}, 'silent'],
    ['exists, suggested_domain found', { field: 'email.suggested_domain', exists: true }, { email: { suggested_domain: 'gmail.com' } }, 'fires'],
    ['ends_with', { field: 'email.domain', ends_with: '.acme.com' }, domain('eu.acme.com'), 'fires'],
    ['ends_with, list', { field: 'email.domain', ends_with: ['.acme.org', '.acme.com'] }, domain('eu.acme.com'), 'fires'],
    ['ends_with, case-sensitive on the lower-cased domain', { field: 'email.domain', ends_with: '.ACME.com' }, domain('eu.acme.com'), 'silent'],
    ['ends_with, no match', { field: 'email.domain', ends_with: '.acme.com' }, domain('notacme.com'), 'silent'],
    ['cidr, IPv4 inside', { field: 'ip.address', cidr: '81.2.64.0/20' }, {}, 'fires'],
    ['cidr, IPv4 outside', { field: 'ip.address', cidr: '81.2.80.0/20' }, {}, 'silent'],
    ['cidr, list', { field: 'ip.address', cidr: ['10.0.0.0/8', '81.2.69.160'] }, {}, 'fires'],
    ['cidr, IPv6 inside', { field: 'ip.address', cidr: '2001:db8::/32' }, { body: { ip: '2001:db8:1::5' } }, 'fires'],
    ['cidr, IPv6 outside', { field: 'ip.address', cidr: '2001:db8::/32' }, { body: { ip: '2001:db9::5' } }, 'silent'],
    ['cidr, IPv4 range never holds an IPv6 address', { field: 'ip.address', cidr: '0.0.0.0/0' }, { body: { ip: '2001:db8::1' } }, 'silent'],
    ['cidr, IPv4-mapped IPv6 is read as IPv4', { field: 'ip.address', cidr: '81.2.69.0/24' }, { body: { ip: '::ffff:81.2.69.160' } }, 'fires'],
    ['cidr, an IPv4-mapped network holds its IPv4 addresses', { field: 'ip.address', cidr: '::ffff:203.0.113.0/120' }, { body: { ip: '203.0.113.77' } }, 'fires'],
    ['cidr, an IPv4-mapped network, outside', { field: 'ip.address', cidr: '::ffff:203.0.113.0/120' }, { body: { ip: '203.0.114.1' } }, 'silent'],
    ['matches', { field: 'email.local_part', matches: '^[0-9]{6,}$' }, { body: { email: '12345678@example.com' } }, 'fires'],
    ['matches, no match', { field: 'email.local_part', matches: '^[0-9]{6,}$' }, {}, 'silent'],
    ['matches, device field', { field: 'device_intelligence.browser_name', matches: 'Headless' }, { body: { device_intelligence: { browser_name: 'HeadlessChrome' } } }, 'fires'],
    ['event_type', { field: 'event_type', equals: 'account_register' }, {}, 'fires'],
  ])('%s', (_name, when, overrides, expected) => {
    expect(verdict(when, overrides)).toBe(expected);
  });
});

describe('combinators, with three-valued logic', () => {
  const yes = { field: 'email.domain', equals: 'example.com' } as const;
  const no = { field: 'email.domain', equals: 'example.org' } as const;
  const unknown = { field: 'ip.country_code', equals: 'GB' } as const;
  const geoDown: ContextOverrides = { ip: { country_code: null }, unavailable: ['ip.geo'] };

  it.each<[string, ConditionInput, 'fires' | 'silent' | 'unknown']>([
    ['all: every part true', { all: [yes, yes] }, 'fires'],
    ['all: one part false', { all: [yes, no] }, 'silent'],
    ['all: false beats unknown', { all: [unknown, no] }, 'silent'],
    ['all: unknown and true is unknown', { all: [yes, unknown] }, 'unknown'],
    ['any: one part true', { any: [no, yes] }, 'fires'],
    ['any: every part false', { any: [no, no] }, 'silent'],
    ['any: true beats unknown', { any: [unknown, yes] }, 'fires'],
    ['any: unknown and false is unknown', { any: [no, unknown] }, 'unknown'],
    ['not: false', { not: no }, 'fires'],
    ['not: true', { not: yes }, 'silent'],
    ['not: unknown stays unknown', { not: unknown }, 'unknown'],
    ['nested', { all: [yes, { any: [no, { not: no }] }] }, 'fires'],
  ])('%s', (_name, when, expected) => {
    expect(verdict(when, geoDown)).toBe(expected);
  });
});

describe('unknown and absent inputs', () => {
  it.each<[string, ConditionInput, ContextOverrides, 'fires' | 'silent' | 'unknown']>([
    ['a null fact is unknown', { field: 'ip.asn', equals: 64501 }, { ip: { asn: null } }, 'unknown'],
    ['a check named unavailable is unknown even if a value is present', { field: 'email.disposable', equals: false }, { unavailable: ['email.disposable'] }, 'unknown'],
    ['deliverability "unknown" is unknown, not a string to match', { field: 'email.deliverability', equals: 'unknown' }, { email: { deliverability: 'unknown', deliverable: null } }, 'unknown'],
    ['not_equals on an unknown fact is unknown, not true', { field: 'ip.country_code', not_equals: 'GB' }, { ip: { country_code: null } }, 'unknown'],
    ['exists on an unknown fact is unknown', { field: 'ip.country_code', exists: false }, { ip: { country_code: null } }, 'unknown'],
    ['a comparison on an absent field does not fire', { field: 'user.first_name', equals: 'Jane' }, {}, 'silent'],
    ['not_equals on an absent field does not fire', { field: 'user.first_name', not_equals: 'Jane' }, {}, 'silent'],
    ['not_in on an absent field does not fire', { field: 'device_intelligence.device_os', not_in: ['iOS'] }, {}, 'silent'],
    ['not over an absent comparison fires (documented)', { not: { field: 'device_intelligence.cookie_enabled', equals: true } }, {}, 'fires'],
    ['cidr on an address that is not one is unknown', { field: 'ip.address', cidr: '0.0.0.0/0' }, { ip: { address: 'garbage' } }, 'unknown'],
  ])('%s', (_name, when, overrides, expected) => {
    expect(verdict(when, overrides)).toBe(expected);
  });
});

/** What a data file that passed validation may still hold (issue 11, finding 8): never compared. */
const wrongType = <T>(value: unknown) => value as T;

describe('a fact of the wrong type is unknown, whatever the operator', () => {
  it.each<[string, ConditionInput, ContextOverrides]>([
    ['ends_with on a number where the city name belongs', { field: 'ip.city', ends_with: 'don' }, { ip: { city: wrongType(42) } }],
    ['matches on a number', { field: 'ip.region', matches: '^Eng' }, { ip: { region: wrongType(7) } }],
    ['equals on an object', { field: 'ip.country', equals: 'France' }, { ip: { country: wrongType({ en: 'France' }) } }],
    ['not_in on an array', { field: 'ip.country_code', not_in: ['FR'] }, { ip: { country_code: wrongType(['GB']) } }],
    ['gt on text where a number belongs', { field: 'ip.asn', gt: 1 }, { ip: { asn: wrongType('64501') } }],
    ['lt on NaN', { field: 'ip.latitude', lt: 90 }, { ip: { latitude: Number.NaN } }],
    ['gte on Infinity', { field: 'ip.accuracy_radius_km', gte: 0 }, { ip: { accuracy_radius_km: Number.POSITIVE_INFINITY } }],
    ['equals on a string where a boolean belongs', { field: 'ip.is_tor', equals: false }, { ip: { is_tor: wrongType('false') } }],
    ['exists on a value of the wrong type', { field: 'ip.time_zone', exists: true }, { ip: { time_zone: wrongType(1) } }],
    ['cidr on a number', { field: 'ip.address', cidr: '0.0.0.0/0' }, { ip: { address: wrongType(1) } }],
  ])('%s', (_name, when, overrides) => {
    expect(verdict(when, overrides)).toBe('unknown');
  });
});

describe('a condition that throws', () => {
  it('is unknown: the other rules and the signals are still evaluated', () => {
    const context = contextOf({ ip: { is_tor: true } });
    Object.defineProperty(context.ip, 'city', { get: () => { throw new Error('a decoder bug'); } });
    const outcome = evaluateRuleSet(context, ruleSetOf({
      rules: [
        { id: 'city', name: 'City', score: 10, when: { field: 'ip.city', equals: 'London' } },
        { library: 'ip_tor' },
      ],
    }));
    expect(outcome.unavailable).toEqual(['rule:city']);
    expect(outcome.details.map((d) => d.rule_name)).toEqual(['IP address is a Tor exit node']);
    expect(outcome.signals).toEqual(['ip_tor']);
  });
});
