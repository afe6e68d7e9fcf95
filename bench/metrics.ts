import type { Evaluation } from '../src/evaluation/evaluate.js';
import { createMetrics } from '../src/metrics/metrics.js';

/**
 * Micro-benchmark of what the metrics add to one request: the response timed by route and status,
 * the evaluation counted by event type and state, two rules fired, nine checks unavailable (the
 * README's first example, with no Tor, proxy or VPN data and no resolver). Then a scrape's render.
 * Beside the service's ~150-250 µs of CPU per request, this is the metrics' share.
 * Run: npx tsx bench/metrics.ts   (npm run bench -- --metrics-only measures it on the running service)
 */

const metrics = createMetrics({ version: 'bench' });
const unavailable = ['email.mx', 'email.disposable', 'ip.tor', 'ip.proxy', 'ip.vpn', 'rule:email_undeliverable', 'rule:email_disposable', 'rule:ip_proxy', 'rule:ip_tor'];
const evaluation = {
  response: { event_type: 'account_register', score: { details: [], fraud_score: 45, state: 'decline' }, unavailable },
  outcome: { rule_ids: ['email_free_provider', 'ip_datacenter'], dry_run_ids: [] },
} as unknown as Evaluation;

const N = 1_000_000;
const nsPerCall = (work: (i: number) => void): number => {
  const started = process.cpuUsage();
  for (let i = 0; i < N; i += 1) work(i);
  const used = process.cpuUsage(started);
  return Math.round(((used.user + used.system) * 1000) / N);
};
for (let round = 0; round < 3; round += 1) {
  const timed = nsPerCall((i) => metrics.requestCompleted('POST', '/v1/risk/evaluate', 200, 0.0004 + (i % 13) * 0.0003));
  const counted = nsPerCall(() => metrics.evaluated(evaluation));
  console.log(`round ${round + 1}: ${timed + counted} ns of CPU per request: ${timed} the response timed, ${counted} the evaluation counted`);
}

let rendered = '';
const renders = 200;
const started = process.cpuUsage();
for (let i = 0; i < renders; i += 1) rendered = await metrics.render();
const used = process.cpuUsage(started);
console.log(`a scrape: ${((used.user + used.system) / renders / 1000).toFixed(2)} ms of CPU, ${rendered.length} bytes`);
