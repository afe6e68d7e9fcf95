import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { EvaluationContext } from '../src/rules/ports.js';
import { createRuleBook } from '../src/rules/rule-book.js';
import { context } from './context.js';

/**
 * The shadow's cost (issue 16): CPU per evaluation of the rule step with and without a shadow rule
 * set, in process, through the production rule book. Live is the shipped `account_register` file;
 * the shadow is the same file plus one rule (the candidate of the backtest tests). "With" is what
 * an evaluation adds when a shadow runs: the shadow scored on the same context, and its outcome
 * serialised for the log record. Rounds alternate without/with, A B A B; the best round of each.
 * Run: npx tsx bench/shadow.ts [--iterations 200000] [--rounds 7]
 */
const { values: args } = parseArgs({ options: { iterations: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '7' } } });
const ITERATIONS = Number(args.iterations);
const ROUNDS = Number(args.rounds);

const live = readFileSync('rules/account_register.yaml', 'utf8');
const shadow = `${live}
  - id: example_org
    name: Sign-up from example.org
    score: 40
    when: { field: email.domain, equals: example.org }
`;
const account = { id: 'acme' };
const snapshot = (withShadow: boolean) => ({
  revision: 1, keys: [], lists: [],
  ruleSets: [{ id: 1, account_id: account.id, event_type: 'account_register', version: 1, yaml: live }],
  shadows: withShadow ? [{ account_id: account.id, event_type: 'account_register', rule_set_version: 2, version: 2, started_at: 1, yaml: shadow }] : [],
});
const logger = pino({ level: 'silent' });
const books = { without: createRuleBook(snapshot(false), { logger }), with: createRuleBook(snapshot(true), { logger }) };

const scenarios: [string, EvaluationContext][] = [
  ['typical request (IPv4, user and device sent)', context({ event_type: 'account_register', user: { user_id: 'u1' }, device_intelligence: { browser_name: 'Firefox', cookie_enabled: true } })],
  ['risky request (Tor, disposable, example.org)', context(
    { event_type: 'account_register', ip: '185.220.101.4', email: '12345678@example.org' },
    { ip: { is_tor: true, is_datacenter: true }, email: { disposable: true } },
  )],
];

let sink = 0;
/** What the evaluator and the log record do per evaluation (evaluate.ts, log-record.ts), without the enrichment. */
function ruleStep(book: typeof books.with, ctx: EvaluationContext): void {
  const outcome = book.evaluate(account, ctx)!;
  const shadowed = book.shadow(account, ctx);
  sink += outcome.fraud_score + (shadowed === undefined ? 0 : JSON.stringify(shadowed).length);
}

/** CPU time (user + system) per evaluation, in µs. */
function round(book: typeof books.with, ctx: EvaluationContext): number {
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) ruleStep(book, ctx);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / ITERATIONS;
}

console.log(`shadow's cost: CPU per evaluation of the rule step, best of ${ROUNDS} rounds of ${ITERATIONS} each, A B A B (Node ${process.version})`);
for (const [name, ctx] of scenarios) {
  for (const book of [books.without, books.with]) for (let i = 0; i < 20_000; i++) ruleStep(book, ctx); // warm-up
  let without = Infinity;
  let withShadow = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    without = Math.min(without, round(books.without, ctx));
    withShadow = Math.min(withShadow, round(books.with, ctx));
  }
  const outcome = books.with.evaluate(account, ctx)!;
  const shadowed = books.with.shadow(account, ctx)!;
  console.log(`  ${name}: without ${without.toFixed(2)} µs, with a shadow ${withShadow.toFixed(2)} µs: +${(withShadow - without).toFixed(2)} µs ` +
    `(live ${outcome.state} ${outcome.fraud_score}, shadow ${shadowed.state} ${shadowed.fraud_score}; ${JSON.stringify(shadowed).length} bytes more in the log record)`);
}
console.log(`checksum ${sink}`);
