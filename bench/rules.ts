import type { EvaluationContext } from '../src/rules/ports.js';
import { evaluateRuleSet } from '../src/rules/engine.js';
import { compilePattern, MAX_REGEX_INPUT } from '../src/rules/pattern.js';
import { parseRuleFile } from '../src/rules/rule-file.js';
import { context } from './context.js';

/**
 * Micro-benchmark of the engine alone: one 50-rule set (library rules, comparisons, sets, CIDR
 * ranges, regular expressions, nested all/any/not), evaluated against a few contexts; then the
 * regular expression engine alone, against V8's.
 * Run: npx tsx bench/rules.ts
 */

const conditions = [
  '{ field: email.domain, ends_with: [".acme.com", ".acme.org"] }',
  '{ field: ip.country_code, in: [KP, IR, SY, CU, RU, BY] }',
  '{ field: ip.asn, in: [14061, 16509, 15169, 8075, 24940, 16276] }',
  '{ field: ip.address, cidr: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, "2001:db8::/32"] }',
  '{ field: ip.address, cidr: [81.2.64.0/20, 185.220.100.0/22] }',
  '{ field: email.local_part, matches: "^[0-9]{6,}$" }',
  '{ field: device_intelligence.browser_name, matches: "Headless|PhantomJS|Selenium" }',
  '{ field: ip.accuracy_radius_km, gt: 500 }',
  '{ field: user.user_id, exists: false }',
  '{ all: [{ field: email.free_provider, equals: true }, { field: ip.is_datacenter, equals: true }] }',
  '{ any: [{ field: ip.is_vpn, equals: true }, { not: { field: ip.country_code, in: [GB, IE, FR, DE] } }] }',
  '{ field: email.domain, not_in: [example.com, example.org] }',
  '{ all: [{ field: device_intelligence.cookie_enabled, equals: false }, { field: ip.asn, not_equals: 64501 }] }',
  '{ field: email.address, matches: "^[a-z]+\\\\.[a-z]+@" }',
];
const library = ['email_undeliverable', 'email_disposable', 'email_free_provider', 'email_role_account', 'email_relay', 'email_typo', 'ip_proxy', 'ip_datacenter', 'ip_tor', 'ip_vpn', 'ip_bogon'];
const lines = ['rules:', ...library.map((id) => `  - library: ${id}`)];
for (let i = 0; i < 50 - library.length; i++) {
  lines.push(`  - id: custom_${i}`, `    name: Custom ${i}`, `    score: ${(i % 7) * 5 - 10}`, `    when: ${conditions[i % conditions.length]}`);
}
const parsed = parseRuleFile('bench', 'bench.yaml', `${lines.join('\n')}\n`);
if (!('ruleSet' in parsed)) throw new Error(JSON.stringify(parsed.problems, null, 2));
const ruleSet = parsed.ruleSet;

const scenarios: [string, EvaluationContext][] = [
  ['typical request (IPv4, user and device sent)', context({ user: { user_id: 'u1' }, device_intelligence: { browser_name: 'Firefox', cookie_enabled: true } })],
  ['risky request (many rules fire)', context(
    { ip: '185.220.101.4', email: '12345678@mail.example.net', device_intelligence: { browser_name: 'HeadlessChrome', cookie_enabled: false } },
    { ip: { is_tor: true, is_datacenter: true, is_vpn: true, country_code: 'RU', asn: 16276, accuracy_radius_km: 1000 }, email: { disposable: true } },
  )],
  ['IPv6, DNS and geo unavailable', context({ ip: '2001:db8::1' }, {
    email: { deliverable: null, deliverability: 'unknown', mx_records: null },
    ip: { country_code: null, country: null, asn: null, accuracy_radius_km: null },
    unavailable: ['email.mx', 'ip.geo', 'ip.asn'],
  })],
];

// The best of several rounds: other processes on a shared machine only ever add time.
const ROUNDS = 7;
const ITERATIONS = 50_000;
console.log(`engine: ${ruleSet.rules.length}-rule set, best of ${ROUNDS} rounds of ${ITERATIONS} evaluations (Node ${process.version})`);
for (const [name, ctx] of scenarios) {
  for (let i = 0; i < 20_000; i++) evaluateRuleSet(ctx, ruleSet); // warm-up: let V8 optimise
  let best = Infinity;
  let sink = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i++) sink += evaluateRuleSet(ctx, ruleSet).fraud_score;
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000 / ITERATIONS);
  }
  const outcome = evaluateRuleSet(ctx, ruleSet);
  console.log(`  ${name}: ${best.toFixed(2)} µs/evaluation (fired ${outcome.details.length}, unknown ${outcome.unavailable.length}, score ${outcome.fraud_score}; checksum ${sink})`);
}

/**
 * Regular expressions: per-match cost of RE2JS (what rules use) against V8's RegExp on the same
 * patterns and inputs; the catastrophic patterns are run on RE2JS only (V8 would not finish), and
 * the last rows are the worst case the limits allow: patterns of ~1,000 instructions that keep
 * the most NFA threads alive, on 256 random characters.
 */
function timeMatches(test: (text: string) => boolean, inputs: string[]): number {
  for (const text of inputs.slice(0, 50)) test(text); // warm-up
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (const text of inputs) test(text);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000 / inputs.length);
  }
  return best;
}

let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const randomText = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
const names = Array.from({ length: 200 }, () => randomText('abcdefghijklmnopqrstuvwxyz0123456789.', 12 + Math.floor(random() * 20)));
const longAb = Array.from({ length: 200 }, () => randomText('ab', MAX_REGEX_INPUT));
const regexCases: [string, string[], boolean][] = [
  ['^[0-9]{6,}$', names, true],
  ['Headless|PhantomJS|Selenium', names, true],
  ['^[a-z]+\\.[a-z]+@', names, true],
  ['^(?:test|demo|fake)[0-9]*$', names, true],
  ['^(\\w?\\w?)+$', [`${'a'.repeat(MAX_REGEX_INPUT - 1)}!`], false],
  [`^${'[a-z]{0,16}'.repeat(8)}$`, [`${'a'.repeat(MAX_REGEX_INPUT - 1)}1`], false],
  ['a[ab]{16}a$', longAb, true],
  ['a[ab]{900}a$', longAb, true],
];
console.log(`\nregular expressions: µs per match, RE2JS (rules) vs V8 RegExp, best of ${ROUNDS} rounds`);
for (const [source, inputs, nativeToo] of regexCases) {
  const pattern = compilePattern(source);
  if ('problem' in pattern) throw new Error(`${source}: ${pattern.problem}`);
  const re2 = timeMatches((text) => pattern.test(text), inputs);
  const regExp = new RegExp(source);
  const native = nativeToo ? timeMatches((text) => regExp.test(text), inputs) : null;
  const label = source.length > 40 ? `${source.slice(0, 37)}...` : source;
  console.log(`  ${label.padEnd(40)} ${String(pattern.instructions).padStart(4)} instr, ${inputs[0]!.length} chars: RE2JS ${re2.toFixed(2)} µs, RegExp ${native === null ? 'would not finish' : `${native.toFixed(2)} µs`}`);
}
