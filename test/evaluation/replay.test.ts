import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEvaluator } from '../../src/evaluation/evaluate.js';
import type { EmailFacts } from '../../src/email/facts.js';
import type { IpFacts } from '../../src/ip/facts.js';
import { logRecordOf } from '../../src/evaluation/log-record.js';
import type { EmailInspector } from '../../src/email/facts.js';
import type { IpInspector } from '../../src/ip/facts.js';
import type { RuleBook } from '../../src/rules/ports.js';
import { loggedOutcome, outcomeDifferences, replay, replayContext } from '../../src/evaluation/replay.js';
import { NO_LIST_MATCHES } from '../../src/lists/facts.js';
import { validateEvaluationRequest } from '../../src/request/evaluation-request.js';
import { evaluateRuleSet } from '../../src/rules/engine.js';
import type { ConditionInput } from '../../src/rules/file-schema.js';
import { LIBRARY_IDS } from '../../src/rules/library.js';
import type { RuleSet } from '../../src/rules/rule-set.js';
import { contextOf, ruleSetOf } from '../rules/context.js';

/**
 * Replay (src/evaluation/replay.ts) over varied evaluations: whatever the request, the facts, the
 * checks that could not run and the rule set, an evaluation made by the real evaluator, logged as
 * the log writer receives it (logRecordOf, the JSON that was sent) and replayed through the same
 * rule set gives the logged outcome exactly, and the rule ids the log indexes as fired. The
 * enrichment is the generator's: each case hands the evaluator the facts under test through the
 * inspectors' own interfaces.
 */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const bodyArb = fc.record({
  ip: fc.constantFrom('81.2.69.160', '203.0.113.9', '10.1.2.3', '2001:db8::1', '64:ff9b::cb00:7109', '::ffff:198.51.100.4'),
  email: fc.constantFrom('jane.doe@example.com', 'Jane.Doe+news@gmail.com', 'admin@mailinator.com', 'ünïcode@bücher.de', 'x@gmial.com'),
  event_type: fc.constant('account_register'),
  user: fc.option(fc.record({ user_id: fc.constantFrom('u-1', 'u-2', ''), first_name: fc.constantFrom('Jane', 'Ed') }, { requiredKeys: [] }), { nil: undefined }),
  device_intelligence: fc.option(fc.record({
    device_hash: fc.constant('50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c'),
    browser_name: fc.constantFrom('Chrome', 'HeadlessChrome'),
    cookie_enabled: fc.boolean(),
  }, { requiredKeys: [] }), { nil: undefined }),
}, { requiredKeys: ['ip', 'email', 'event_type'] });

const emailArb = fc.record({
  deliverable: maybe(fc.boolean()),
  disposable: maybe(fc.boolean()),
  free_provider: maybe(fc.boolean()),
  role_account: maybe(fc.boolean()),
  relay: maybe(fc.boolean()),
  suggested_domain: maybe(fc.constant('gmail.com')),
  domain: fc.constantFrom('example.com', 'gmail.com', 'mailinator.com'),
});

const ipArb = fc.record({
  country_code: maybe(fc.constantFrom('GB', 'US', 'KP')),
  // A wrong type, as a lying data file could hold: unknown to the engine, and it must stay so in replay.
  asn: maybe(fc.oneof(fc.constantFrom(64501, 16509, 14061), fc.constant('AS64501' as unknown as number))),
  latitude: maybe(fc.double({ min: -90, max: 90, noNaN: true })),
  accuracy_radius_km: maybe(fc.integer({ min: 1, max: 1000 })),
  is_tor: maybe(fc.boolean()),
  is_proxy: maybe(fc.boolean()),
  is_datacenter: maybe(fc.boolean()),
  is_vpn: maybe(fc.boolean()),
  is_bogon: maybe(fc.boolean()),
});

const CHECKS = ['email.mx', 'email.disposable', 'email.free_provider', 'email.relay', 'ip.geo', 'ip.asn', 'ip.tor', 'ip.proxy', 'ip.datacenter', 'ip.vpn', 'store'];

const leafArb: fc.Arbitrary<ConditionInput> = fc.oneof(
  fc.constantFrom<ConditionInput>(
    { field: 'email.domain', ends_with: ['.com', 'mailinator.com'] },
    { field: 'email.local_part', matches: '^[a-z]+\\.' },
    { field: 'ip.country_code', in: ['GB', 'KP'] },
    { field: 'ip.address', cidr: ['10.0.0.0/8', '2001:db8::/32', '203.0.113.0/24'] },
    { field: 'user.user_id', exists: true },
    { field: 'device_intelligence.browser_name', matches: '^Headless' },
    { field: 'device_intelligence.cookie_enabled', equals: false },
    { field: 'email.suggested_domain', exists: true },
    { field: 'ip.embedded_ipv4', exists: true },
  ),
  fc.record({ field: fc.constant('ip.asn' as const), gt: fc.integer({ min: 10000, max: 70000 }) }),
  fc.record({ field: fc.constant('ip.latitude' as const), lte: fc.integer({ min: -90, max: 90 }) }),
  fc.record({ field: fc.constantFrom('email.disposable' as const, 'ip.is_tor' as const, 'ip.is_vpn' as const, 'email.deliverable' as const), equals: fc.boolean() }),
  fc.record({ field: fc.constantFrom('ip.is_proxy' as const, 'email.free_provider' as const), not_equals: fc.boolean() }),
);

const conditionArb: fc.Arbitrary<ConditionInput> = fc.letrec<{ condition: ConditionInput }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    fc.record({ all: fc.array(tie('condition'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ any: fc.array(tie('condition'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('condition') }),
  ),
})).condition;

const modeArb = fc.constantFrom(undefined, 'live', 'dry_run', 'off');
const scoreArb = fc.integer({ min: -100, max: 100 });

const ruleFileArb = fc.record({
  thresholds: fc.option(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 })).map(([a, b]) => ({ review: Math.min(a, b), decline: Math.max(a, b) })), { nil: undefined }),
  library: fc.uniqueArray(fc.record({ library: fc.constantFrom(...LIBRARY_IDS), score: fc.option(scoreArb, { nil: undefined }), mode: modeArb }), { selector: (r) => r.library, maxLength: 6 }),
  custom: fc.array(fc.record({ score: scoreArb, mode: modeArb, when: conditionArb }), { maxLength: 5 }),
}).map(({ thresholds, library, custom }) => {
  const strip = <T extends object>(rule: T) => Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined));
  return {
    ...(thresholds ? { thresholds } : {}),
    rules: [...library.map(strip), ...custom.map((rule, i) => strip({ id: `custom_${i}`, name: `Custom ${i}`, ...rule }))],
  };
});

describe('replaying a logged evaluation', () => {
  it('through the version that decided gives the logged outcome exactly, over varied evaluations', async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, emailArb, ipArb, fc.subarray(CHECKS), ruleFileArb, async (body, emailFacts, ipFacts, unavailable, file) => {
        const validated = validateEvaluationRequest(body);
        if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
        const request = validated.value;
        const ruleSet = ruleSetOf(file);
        const email: EmailFacts = {
          address: request.email, normalized: request.parsedEmail.normalized, canonical: request.parsedEmail.normalized,
          deliverability: emailFacts.deliverable === null ? 'unknown' : emailFacts.deliverable ? 'deliverable' : 'undeliverable', mx_records: null, ...emailFacts,
        };
        const ip = {
          address: request.parsedIp.address, version: request.parsedIp.version, embedded_ipv4: request.parsedIp.embedded?.address ?? null,
          transition: request.parsedIp.embedded?.via ?? null, country: null, region: null, city: null, postal_code: null, longitude: null,
          time_zone: null, as_organization: null, ...ipFacts,
        } as IpFacts;
        const evaluation = await evaluatorFor(ruleSet, email, ip, unavailable, !unavailable.includes('store'))(request, { id: 'acme' });
        const record = logRecordOf({ id: 'acme' }, request, evaluation!, JSON.stringify(evaluation!.response));

        const logged = { id: record.id, request: JSON.parse(record.request), response: JSON.parse(record.response) };
        const replayed = replay(logged, ruleSet);
        expect(outcomeDifferences(replayed.outcome, loggedOutcome(logged)!)).toEqual([]);
        expect(replayed.outcome.fired).toEqual(record.fired);
        // The explanation agrees with the outcome, rule by rule.
        expect(replayed.rules.filter((r) => r.outcome === 'fired').map((r) => r.id)).toEqual(record.fired);
        expect(replayed.rules.filter((r) => r.outcome === 'unknown').map((r) => `rule:${r.id}`)).toEqual(replayed.outcome.unavailable);
      }),
      { numRuns: 300 },
    );
  });

  it('reads an answer logged before `rule_id` existed as the same outcome, and a different id as a difference', () => {
    const outcome = evaluateRuleSet(contextOf(), ruleSetOf({ rules: [{ id: 'always', name: 'Always', score: 5, when: { field: 'event_type', equals: 'account_register' } }] }));
    expect(outcome.details).toEqual([{ rule_id: 'always', rule_name: 'Always', rule_type: 'static', score: 5 }]);
    const logged = { details: [{ rule_name: 'Always', rule_type: 'static' as const, score: 5 }], fraud_score: 5, state: 'approve', dry_run: [], signals: outcome.signals, unavailable: [] };
    expect(outcomeDifferences(outcome, logged)).toEqual([]);
    expect(outcomeDifferences(outcome, { ...logged, details: [{ ...logged.details[0]!, rule_id: 'renamed' }] })).toEqual(['details']);
  });

  it('takes the checks that could not run from the log, never its rule entries, and enriches nothing', () => {
    const logged = {
      id: 'e1',
      request: { ip: '81.2.69.160', email: 'jane@example.com', event_type: 'account_register', user: { user_id: 'u-1' } },
      response: {
        score: { details: [], fraud_score: 0, state: 'approve' }, dry_run: [], signals: [],
        email: { domain: 'example.com', disposable: null }, ip: { address: '81.2.69.160', is_tor: null },
        unavailable: ['email.mx', 'ip.tor', 'store', 'rule:ip_tor'],
      },
    };
    const context = replayContext(logged);
    expect([...context.unavailable]).toEqual(['email.mx', 'ip.tor', 'store']);
    expect(context.user).toEqual({ user_id: 'u-1' });
    expect(context.email).toBe(logged.response.email);
    expect(context.request.parsedIp.address).toBe('81.2.69.160');
    const ruleSet = ruleSetOf({ rules: [{ library: 'ip_tor' }] });
    expect(replay(logged, ruleSet).rules).toEqual([{
      id: 'ip_tor', name: 'IP address is a Tor exit node', score: 40, mode: 'live', outcome: 'unknown',
      evidence: [{ field: 'ip.is_tor', value: null, reading: 'unknown', unavailable: 'ip.tor', condition: '= true' }],
    }]);
  });

  it('says so when the rule step had failed: the log holds no rule set\'s outcome', () => {
    const logged = { id: 'e2', request: {}, response: { score: { details: [], fraud_score: 0, state: 'approve' }, dry_run: [], signals: [], email: {}, ip: {}, unavailable: ['rules'] } };
    expect(loggedOutcome(logged)).toBeNull();
    expect(() => replayContext(logged)).toThrow(/does not validate/);
  });
});

/** The real evaluator, enriching with the given facts through the inspectors' interfaces, scoring with `ruleSet`. */
function evaluatorFor(ruleSet: RuleSet, email: EmailFacts, ip: IpFacts, unavailable: string[], storeAvailable: boolean) {
  const emailChecks = unavailable.filter((c) => c.startsWith('email.'));
  const ipChecks = unavailable.filter((c) => c.startsWith('ip.'));
  const emailInspector: EmailInspector = {
    inspect: async () => ({ facts: email, unavailable: emailChecks }),
    inspectCached: () => ({ facts: email, unavailable: emailChecks }),
    status: () => [],
    close: async () => {},
  };
  const ipInspector: IpInspector = { inspect: () => ({ facts: ip, unavailable: ipChecks }), status: () => [], close: async () => {} };
  const rules: RuleBook = {
    eventTypes: () => ['account_register'],
    evaluate: (_account, context) => ({ ...evaluateRuleSet(context, ruleSet), rule_set_version: 1 }),
    status: () => [],
    close: async () => {},
  };
  return createEvaluator({ email: emailInspector, ip: ipInspector, rules, store: { available: storeAvailable }, history: null, lists: { check: () => NO_LIST_MATCHES }, deadlineMs: 1000, onStepError: (step, error) => {
    throw new Error(`${step}: ${String(error)}`);
  } });
}
