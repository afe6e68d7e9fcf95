import { describe, expect, it } from 'vitest';
import { evaluateRuleSet, stateFor } from '../../src/rules/engine.js';
import { LIBRARY } from '../../src/rules/library.js';
import { contextOf, ruleSetOf } from './context.js';

const always = { field: 'email.domain', equals: 'example.com' } as const;
const rule = (id: string, score: number, extra: object = {}) => ({ id, name: `Rule ${id}`, score, when: always, ...extra });

describe('stateFor: half-open bands', () => {
  it.each([
    [0, 'approve'],
    [19, 'approve'],
    [20, 'review'],
    [39, 'review'],
    [40, 'decline'],
    [100, 'decline'],
  ] as const)('%i is %s with the default thresholds', (score, state) => {
    expect(stateFor(score, { review: 20, decline: 40 })).toBe(state);
  });

  it('uses the thresholds it is given', () => {
    expect(stateFor(49, { review: 30, decline: 50 })).toBe('review');
    expect(stateFor(50, { review: 30, decline: 50 })).toBe('decline');
    expect(stateFor(29, { review: 30, decline: 50 })).toBe('approve');
  });
});

describe('evaluateRuleSet: scoring', () => {
  it.each([
    ['band edge 19', [19], 19, 'approve'],
    ['band edge 20', [20], 20, 'review'],
    ['band edge 39', [20, 19], 39, 'review'],
    ['band edge 40', [20, 20], 40, 'decline'],
    ['a negative score lowers the sum', [40, -25], 15, 'approve'],
    ['the sum is clamped at 0', [10, -50], 0, 'approve'],
    ['the sum is clamped at 100, which declines', [60, 60], 100, 'decline'],
    ['no rule fires', [], 0, 'approve'],
  ] as const)('%s', (_name, scores, fraudScore, state) => {
    const outcome = evaluateRuleSet(contextOf(), ruleSetOf({ rules: scores.map((s, i) => rule(`r${i}`, s)) }));
    expect(outcome.fraud_score).toBe(fraudScore);
    expect(outcome.state).toBe(state);
    expect(outcome.details.map((d) => d.score)).toEqual(scores);
  });

  it('reads the thresholds of the rule file', () => {
    const ruleSet = ruleSetOf({ thresholds: { review: 10, decline: 15 }, rules: [rule('a', 15)] });
    expect(evaluateRuleSet(contextOf(), ruleSet).state).toBe('decline');
  });

  it('lists details in the file order, each static, and only rules that fired', () => {
    const outcome = evaluateRuleSet(
      contextOf(),
      ruleSetOf({ rules: [rule('b', 5), { ...rule('x', 50), when: { field: 'email.domain', equals: 'other.org' } }, rule('a', 7)] }),
    );
    expect(outcome.details).toEqual([
      { rule_id: 'b', rule_name: 'Rule b', rule_type: 'static', score: 5 },
      { rule_id: 'a', rule_name: 'Rule a', rule_type: 'static', score: 7 },
    ]);
  });
});

describe('evaluateRuleSet: modes', () => {
  it('reports a dry-run rule that fires apart, and does not count it', () => {
    const outcome = evaluateRuleSet(contextOf(), ruleSetOf({ rules: [rule('live', 10), rule('watch', 50, { mode: 'dry_run' })] }));
    expect(outcome.fraud_score).toBe(10);
    expect(outcome.details).toEqual([{ rule_id: 'live', rule_name: 'Rule live', rule_type: 'static', score: 10 }]);
    expect(outcome.dry_run).toEqual([{ rule_id: 'watch', rule_name: 'Rule watch', rule_type: 'static', score: 50 }]);
  });

  it('does not evaluate a rule that is off, nor report it unavailable', () => {
    const unknownInput = { field: 'ip.asn', equals: 1 };
    const outcome = evaluateRuleSet(contextOf({ ip: { asn: null } }), ruleSetOf({ rules: [rule('off', 50, { mode: 'off', when: unknownInput })] }));
    expect(outcome).toMatchObject({ details: [], dry_run: [], fraud_score: 0, unavailable: [] });
  });

  it('names a dry-run rule whose input is unknown', () => {
    const outcome = evaluateRuleSet(contextOf({ ip: { asn: null } }), ruleSetOf({ rules: [rule('watch', 5, { mode: 'dry_run', when: { field: 'ip.asn', equals: 1 } })] }));
    expect(outcome.unavailable).toEqual(['rule:watch']);
  });
});

describe('evaluateRuleSet: library rules and signals', () => {
  it('fires a library rule with its exact name and default score, or the file\'s override', () => {
    const context = contextOf({ email: { disposable: true }, ip: { is_tor: true } });
    const outcome = evaluateRuleSet(context, ruleSetOf({ rules: [{ library: 'email_disposable' }, { library: 'ip_tor', score: 12 }] }));
    expect(outcome.details).toEqual([
      { rule_id: 'email_disposable', rule_name: 'Email address is disposable', rule_type: 'static', score: 40 },
      { rule_id: 'ip_tor', rule_name: 'IP address is a Tor exit node', rule_type: 'static', score: 12 },
    ]);
  });

  it('lists every true signal, whether or not a rule fired on it', () => {
    const context = contextOf({ email: { free_provider: true, suggested_domain: 'gmail.com' }, ip: { is_vpn: true, is_datacenter: true } });
    const outcome = evaluateRuleSet(context, ruleSetOf({ rules: [{ library: 'ip_datacenter' }] }));
    expect(outcome.signals).toEqual(['email_free_provider', 'email_typo', 'ip_datacenter', 'ip_vpn']);
    expect(outcome.details.map((d) => d.rule_name)).toEqual(['Data center IP']);
  });

  it('fires "Email is not deliverable" only on a known false, and names it when DNS timed out', () => {
    const ruleSet = ruleSetOf({ rules: [{ library: 'email_undeliverable' }] });
    const undeliverable = evaluateRuleSet(contextOf({ email: { deliverable: false, deliverability: 'undeliverable', mx_records: [] } }), ruleSet);
    expect(undeliverable.details.map((d) => d.rule_name)).toEqual(['Email is not deliverable']);
    expect(undeliverable.signals).toEqual(['email_undeliverable']);
    const timedOut = evaluateRuleSet(
      contextOf({ email: { deliverable: null, deliverability: 'unknown', mx_records: null }, unavailable: ['email.mx'] }),
      ruleSet,
    );
    expect(timedOut).toMatchObject({ details: [], fraud_score: 0, signals: [], unavailable: ['rule:email_undeliverable'] });
  });

  it('does not fire a Tor rule when the Tor list is not loaded, even if the flag reads false', () => {
    const outcome = evaluateRuleSet(contextOf({ ip: { is_tor: false }, unavailable: ['ip.tor'] }), ruleSetOf({ rules: [{ library: 'ip_tor' }] }));
    expect(outcome.unavailable).toEqual(['rule:ip_tor']);
  });

  it('has the spec names verbatim, unique ids and unique names', () => {
    const names = LIBRARY.map((r) => r.name);
    for (const name of ['Email is not deliverable', 'Email address is disposable', 'IP address belongs to a Proxy Server', 'Data center IP', 'IP address is a Tor exit node']) {
      expect(names).toContain(name);
    }
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(LIBRARY.map((r) => r.id)).size).toBe(LIBRARY.length);
  });
});
