import { describe, expect, it } from 'vitest';
import type { HistoryFacts } from '../../src/history/facts.js';
import { evaluateRuleSet } from '../../src/rules/engine.js';
import { contextOf, ruleSetOf } from '../rules/context.js';

/** The behaviour rules in the engine alone: thresholds from params, three answers kept apart. */
const history = (over: Partial<HistoryFacts> = {}): HistoryFacts => ({
  ip: { events_1h: 3, events_24h: 3, accounts_24h: 1 },
  email: { events_24h: 1, devices_30d: 1, first_seen: '2026-06-01T12:00:00.000Z' },
  device: null,
  user: null,
  at_least: [],
  partial: false,
  ...over,
});
const fired = (file: object, context: ReturnType<typeof contextOf>) => evaluateRuleSet(context, ruleSetOf(file)).details.map((d) => d.rule_name);

describe('behaviour library rules', () => {
  it('take their thresholds from params, the library\'s defaults otherwise', () => {
    const context = contextOf({ history: history() });
    expect(fired({ rules: [{ library: 'ip_velocity' }] }, context)).toEqual([]);
    expect(fired({ rules: [{ library: 'ip_velocity', params: { events_1h: 3 } }] }, context)).toEqual(['Many events from this IP address']);
  });

  it('are unknown without history (the store did not answer), absent without the user or device they are about', () => {
    const file = { rules: [{ library: 'ip_velocity' }, { library: 'user_new_device' }, { library: 'device_multi_account' }] };
    const down = evaluateRuleSet(contextOf({ history: null }), ruleSetOf(file));
    expect(down.details).toEqual([]);
    expect(down.unavailable).toEqual(['rule:ip_velocity']);
    const withUser = evaluateRuleSet(contextOf({ history: null, body: { user: { user_id: 'u' }, device_intelligence: { device_hash: 'e'.repeat(64) } } }), ruleSetOf(file));
    expect(withUser.unavailable).toEqual(['rule:ip_velocity', 'rule:user_new_device', 'rule:device_multi_account']);
  });

  it('impossible travel: fires on a fast trip between networks; not on one network, nor through a VPN; unknown when the networks are', () => {
    const file = { rules: [{ library: 'impossible_travel' }] };
    const trip = (previous: Partial<NonNullable<NonNullable<HistoryFacts['user']>['previous']>>) => contextOf({
      body: { user: { user_id: 'u' } },
      history: history({
        user: {
          first_seen: '2026-06-01T12:00:00.000Z', new_device: null, new_country: true, devices_30d: 0, countries_24h: 2,
          previous: { at: '2026-06-01T12:00:00.000Z', country_code: 'GB', distance_km: 16_960, speed_kmh: 1_017_600, same_network: false, anonymous: false, ...previous },
        },
      }),
    });
    expect(fired(file, trip({}))).toEqual(['Impossible travel']);
    expect(fired(file, trip({ same_network: true }))).toEqual([]);
    expect(fired(file, trip({ anonymous: true }))).toEqual([]);
    // A flag unknown (its source not loaded): maybe a VPN, so not travel on a guess.
    expect(fired(file, trip({ anonymous: null }))).toEqual([]);
    expect(evaluateRuleSet(trip({ anonymous: null }), ruleSetOf(file)).unavailable).toEqual(['rule:impossible_travel']);
    expect(fired(file, trip({ speed_kmh: 800 }))).toEqual([]);
    expect(evaluateRuleSet(trip({ same_network: null }), ruleSetOf(file)).unavailable).toEqual(['rule:impossible_travel']);
    expect(evaluateRuleSet(trip({ speed_kmh: null }), ruleSetOf(file)).unavailable).toEqual(['rule:impossible_travel']);
  });
});

describe('a distinct count past its cap (history.at_least) is a lower bound', () => {
  const verdict = (when: object, capped: boolean) => {
    const context = contextOf({ history: history({ ip: { events_1h: 300, events_24h: 300, accounts_24h: 100 }, at_least: capped ? ['ip.accounts_24h'] : [] }) });
    const outcome = evaluateRuleSet(context, ruleSetOf({ rules: [{ id: 'r', name: 'R', score: 10, when }] }));
    return outcome.unavailable.includes('rule:r') ? 'unknown' : outcome.details.length === 1 ? 'fires' : 'silent';
  };

  it.each([
    ['gte met by the bound alone fires', { field: 'history.ip.accounts_24h', gte: 50 }, 'fires'],
    ['gt met by the bound alone fires', { field: 'history.ip.accounts_24h', gt: 99 }, 'fires'],
    ['gte above the bound is unknown, not silent: the real count may meet it', { field: 'history.ip.accounts_24h', gte: 150 }, 'unknown'],
    ['lt is unknown, not true: the real count may be above', { field: 'history.ip.accounts_24h', lt: 150 }, 'unknown'],
    ['lte is unknown', { field: 'history.ip.accounts_24h', lte: 100 }, 'unknown'],
    ['equals is unknown', { field: 'history.ip.accounts_24h', equals: 100 }, 'unknown'],
    ['an exact count beside it is compared as before', { field: 'history.ip.events_1h', lt: 500 }, 'fires'],
  ])('%s', (_name, when, expected) => {
    expect(verdict(when, true)).toBe(expected);
  });

  it('is compared as an exact count when not capped', () => {
    expect(verdict({ field: 'history.ip.accounts_24h', lt: 150 }, false)).toBe('fires');
    expect(verdict({ field: 'history.ip.accounts_24h', equals: 100 }, false)).toBe('fires');
  });
});

describe('a partial history (this replica\'s own counts: the store did not answer) has lower bounds only', () => {
  const partial = history({
    ip: { events_1h: 30, events_24h: 40, accounts_24h: null },
    email: { events_24h: 2, devices_30d: null, first_seen: null },
    device: { events_1h: 30, accounts_30d: null, first_seen: null },
    at_least: ['ip.events_1h', 'ip.events_24h', 'email.events_24h', 'device.events_1h'],
    partial: true,
  });
  const verdict = (when: object) => {
    const context = contextOf({ history: partial, body: { device_intelligence: { device_hash: 'e'.repeat(64) } } });
    const outcome = evaluateRuleSet(context, ruleSetOf({ rules: [{ id: 'r', name: 'R', score: 10, when }] }));
    return outcome.unavailable.includes('rule:r') ? 'unknown' : outcome.details.length === 1 ? 'fires' : 'silent';
  };

  it.each([
    ['an event count whose bound meets gte fires', { field: 'history.ip.events_1h', gte: 5 }, 'fires'],
    ['gt met by the bound alone fires (a device\'s too)', { field: 'history.device.events_1h', gt: 29 }, 'fires'],
    ['gte above the bound is unknown: other replicas may have counted the rest', { field: 'history.ip.events_24h', gte: 100 }, 'unknown'],
    ['lt is unknown, never true on a guess', { field: 'history.email.events_24h', lt: 3 }, 'unknown'],
    ['lte and equals are unknown', { any: [{ field: 'history.ip.events_1h', lte: 30 }, { field: 'history.ip.events_1h', equals: 30 }] }, 'unknown'],
    ['a distinct count (null: the store\'s) is unknown', { field: 'history.ip.accounts_24h', gte: 1 }, 'unknown'],
    ['the device\'s accounts too', { field: 'history.device.accounts_30d', lt: 100 }, 'unknown'],
  ])('%s', (_name, when, expected) => {
    expect(verdict(when)).toBe(expected);
  });

  it('the library\'s ip_velocity fires from its threshold; the device\'s and user\'s rules stay unknown', () => {
    const file = { rules: [{ library: 'ip_velocity' }, { library: 'device_multi_account' }, { library: 'user_new_device' }] };
    const outcome = evaluateRuleSet(contextOf({ history: partial, body: { user: { user_id: 'u' }, device_intelligence: { device_hash: 'e'.repeat(64) } } }), ruleSetOf(file));
    expect(outcome.details.map((d) => d.rule_name)).toEqual(['Many events from this IP address']);
    expect(outcome.unavailable).toEqual(['rule:device_multi_account', 'rule:user_new_device']);
  });
});
