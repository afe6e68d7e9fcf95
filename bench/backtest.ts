/**
 * `npx tsx bench/backtest.ts`: what a backtest costs (issue 16). Figures to compare on one machine,
 * not bounds (no test asserts a speed):
 *
 * - replay throughput: a log of `--rows` evaluations (default 1,000,000) on SQLite, filled by bulk
 *   insert from answers the real evaluator gave once (Tor exit, disposable mailbox, data centre,
 *   clean, unknown checks), varied per row (id, address, e-mail), 1% of them labelled; then one
 *   backtest of all of them through a candidate that adds a rule, in the worker thread the admin
 *   API uses, timed, in evaluations a second;
 * - live p99 with and without a backtest running: the built service (dist/server.js, so run
 *   `npm run build` first) on that store, driven by autocannon at `--rate` requests a second for
 *   `--seconds` per run, quiet, then while a backtest started through the admin API runs, A B A B.
 *
 *   npx tsx bench/backtest.ts [--rows 1000000] [--seconds 10] [--rounds 2] [--rate 400] [--skip-live]
 */
import './temp-root.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Sqlite from 'better-sqlite3';
import { pino } from 'pino';
import { runBacktestInWorker } from '../src/backtest/worker.js';
import { firstIdAt, ipKey } from '../src/store/log-record.js';
import { openStore } from '../src/store/index.js';
import { parseDatabaseUrl, type DatabaseUrl } from '../src/config/store-url.js';
import { bearer, evaluationBody, KEY_A, startTestApp } from '../test/support/app.js';
import { freePort } from '../test/support/process.js';
import { WITH_EXAMPLE_ORG_RULE } from '../test/backtest/candidate.js';
import { startFlags } from './start-flags.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    rate: { type: 'string', default: '400' },
    'skip-live': { type: 'boolean', default: false },
  },
});
const rows = Math.min(5_000_000, Number(values.rows));
const seconds = Math.min(60, Number(values.seconds));
const rounds = Math.min(5, Number(values.rounds));
/** Live requests a second: below what the machine can serve, so p99 shows the backtest's cost rather than a queue. */
const rate = Math.min(20_000, Number(values.rate));

const TOR_EXIT = '198.51.100.7';

interface Template {
  request: string;
  response: string;
  id: string;
  ip: string;
  email: string;
  state: string;
  fraud_score: number;
}

/** Answers the real evaluator gives, once each: what the log's rows are varied from. */
async function templates(dataDir: string): Promise<Template[]> {
  const t = await startTestApp({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  try {
    const cases = [
      { ip: TOR_EXIT, email: 'tor.user@example.com' },
      { ip: '203.0.113.10', email: 'someone@mailinator.com' },
      { ip: '192.0.2.10', email: 'dc.user@example.net' },
      { ip: '81.2.69.160', email: 'jane.doe@example.com', user: { user_id: 'u-1' } },
      { ip: '81.2.69.161', email: 'john@example.org', device_intelligence: { device_hash: 'a'.repeat(64), browser_name: 'Chrome' } },
      { ip: '2001:db8::1', email: 'v6@example.com' },
    ];
    const made: Template[] = [];
    for (const body of cases) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody(body) });
      if (response.statusCode !== 200) throw new Error(`template: ${response.statusCode} ${response.body}`);
      const answer = response.json();
      const request = JSON.stringify({ ip: body.ip, email: body.email, event_type: 'account_register', user: body.user, device_intelligence: body.device_intelligence });
      made.push({ request, response: response.body, id: answer.id, ip: body.ip, email: body.email, state: answer.score.state, fraud_score: answer.score.fraud_score });
    }
    return made;
  } finally {
    await t.app.close();
  }
}

/** `rows` evaluations over the last 20 days, by bulk insert (one transaction per 20,000). */
function fill(path: string, made: Template[], count: number, now: number): number {
  const db = new Sqlite(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const insert = db.prepare(`insert into evaluations (id, account_id, evaluated_at, event_type, email, email_domain, ip_key, user_id, device_hash, state, fraud_score, rule_set_version, request, response)
    values (?, 'default', ?, 'account_register', ?, ?, ?, null, null, ?, ?, 1, ?, ?)`);
  const label = db.prepare('insert into labels (account_id, evaluation_id, label, reason, author, created_at) values (\'default\', ?, ?, null, \'bench\', ?)');
  const started = performance.now();
  const span = 20 * 86_400_000;
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const t = made[i % made.length]!;
      const at = now - span + Math.floor((i / count) * span);
      const id = `${firstIdAt(at).slice(0, 14)}7${(i & 0xfff).toString(16).padStart(3, '0')}-8${((i >>> 12) & 0xfff).toString(16).padStart(3, '0')}-${i.toString(16).padStart(12, '0')}`;
      const local = `u${i}.`;
      const email = local + t.email;
      const ip = t.ip.includes(':') ? t.ip : t.ip === TOR_EXIT ? t.ip : `${t.ip.split('.').slice(0, 3).join('.')}.${i % 250}`;
      const vary = (text: string) => text.replaceAll(t.id, id).replaceAll(t.email, email).replaceAll(`"${t.ip}"`, `"${ip}"`);
      insert.run(id, at, email, email.split('@')[1], ipKey(ip), t.state, t.fraud_score, vary(t.request), vary(t.response));
      if (i % 100 === 0) label.run(id, i % 200 === 0 ? 'fraud' : 'legit', at);
    }
  });
  for (let i = 0; i < count; i += 20_000) batch(i, Math.min(count, i + 20_000));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return Math.round(count / ((performance.now() - started) / 1000));
}

function database(url: string): DatabaseUrl {
  const parsed = parseDatabaseUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'risk-bench-backtest-'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  writeFileSync(join(dataDir, 'tor-exit-nodes.txt'), `${TOR_EXIT}\n`);
  writeFileSync(join(dataDir, 'datacenter-ranges.txt'), '192.0.2.0/24\n');
  const path = join(root, 'risk.sqlite');
  const url = `sqlite:${path}`;
  const now = Date.now();

  // The schema, as the service makes it; then the rows, straight into the table.
  const store = await openStore({ database: database(url), logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: false });
  await store.close();
  const made = await templates(dataDir);
  console.log(`templates: ${made.map((t) => `${t.state} ${t.fraud_score}`).join(', ')}`);
  const insertsPerS = fill(path, made, rows, now);
  console.log(`filled ${rows.toLocaleString('en')} evaluations (${insertsPerS.toLocaleString('en')} inserts/s)`);

  const started = performance.now();
  let progressEvents = 0;
  const report = await runBacktestInWorker(
    { database: database(url), scope: { account: 'default', eventType: 'account_register', since: now - 30 * 86_400_000, until: now + 1 }, yaml: WITH_EXAMPLE_ORG_RULE },
    { onProgress: () => (progressEvents += 1) },
  );
  const elapsed = (performance.now() - started) / 1000;
  console.log(`backtest of ${report.evaluations.toLocaleString('en')} evaluations (SQLite, worker thread): ${elapsed.toFixed(1)} s, ` +
    `${Math.round(report.evaluations / elapsed).toLocaleString('en')} evaluations/s; ${report.changed.state} changed state, ` +
    `${report.skipped.total} skipped, ${report.labels.labelled} labelled, ${progressEvents} progress events`);

  if (!values['skip-live']) await liveP99(root, dataDir, url, now);
}

/** The built service on the filled store: autocannon alone, then while a backtest runs, `rounds` times. */
async function liveP99(root: string, dataDir: string, url: string, now: number): Promise<void> {
  const port = await freePort();
  const key = KEY_A;
  const env = {
    PATH: process.env.PATH!, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', API_KEYS: key, DATA_DIR: dataDir, RULES_DIR: 'rules',
    DATABASE_URL: url, DNS_SERVERS: '127.0.0.1:9', DNS_TIMEOUT_MS: '200', RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn', HISTORY_DAYS: '0',
    ...(process.env.BACKTEST_CPU_PERCENT ? { BACKTEST_CPU_PERCENT: process.env.BACKTEST_CPU_PERCENT } : {}),
  };
  const store = await openStore({ database: database(url), logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: false });
  const token = await store.adminTokens.create({ name: 'bench', role: 'owner', account: null, expiresAt: null }, 'bench');
  await store.close();

  const server = spawn(process.execPath, [...startFlags(), 'dist/server.js'], { env, stdio: ['ignore', openSync(join(root, 'service.log'), 'w'), 'inherit'] });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, server);
    const drive = async () => {
      const result = await autocannon({
        url: `${base}/v1/risk/evaluate`, method: 'POST', connections: 10, overallRate: rate, duration: seconds,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ip: '81.2.69.160', email: 'jane.doe@example.com', event_type: 'account_register' }),
      });
      return { p99: result.latency.p99, rps: Math.round(result.requests.average), errors: result.errors + result.non2xx };
    };
    await drive(); // warm-up
    const admin = { authorization: `Bearer ${token.token}` };
    for (let round = 1; round <= rounds; round++) {
      const quiet = await drive();
      const started = await fetch(`${base}/admin/v1/accounts/default/rule-sets/account_register/backtests`, {
        method: 'POST', headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ yaml: WITH_EXAMPLE_ORG_RULE, since: new Date(now - 30 * 86_400_000).toISOString(), until: new Date(now + 1).toISOString() }),
      });
      if (started.status !== 202) throw new Error(`backtest not started: ${started.status} ${await started.text()}`);
      const job = (await started.json()) as { id: string };
      const busy = await drive();
      const state = (await (await fetch(`${base}/admin/v1/accounts/default/rule-sets/account_register/backtests/${job.id}`, { headers: admin })).json()) as { status: string; progress: { evaluations: number } };
      if (state.status === 'running') {
        const cancelled = await fetch(`${base}/admin/v1/accounts/default/rule-sets/account_register/backtests/${job.id}`, { method: 'DELETE', headers: admin });
        if (cancelled.status !== 200) throw new Error(`backtest not cancelled: ${cancelled.status} ${await cancelled.text()}`);
      }
      console.log(`round ${round}: live p99 ${quiet.p99} ms (${quiet.rps} req/s) quiet; ${busy.p99} ms (${busy.rps} req/s) with a backtest running ` +
        `(${state.status}, ${state.progress.evaluations.toLocaleString('en')} replayed by then); errors ${quiet.errors + busy.errors}`);
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
}

async function waitReady(url: string, child: ChildProcess, limitMs = 60_000): Promise<void> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}`);
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} not ready within ${limitMs} ms`);
}

await main();
