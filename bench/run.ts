/**
 * `npm run bench`: the service against the framework's own ceiling, in the same run.
 *
 * Starts, from the built code, the service (open geo/ASN default, a generated full-size data set,
 * the shipped rules, a DNS server on 127.0.0.1) and a ceiling server (bare Fastify, same bearer
 * auth, same body, same response bytes, one log line per request), then drives both with
 * autocannon, alternating A B A B…, and prints req/s, p50/p99 and the ratio. Also: the 400 path,
 * the cold path (10,000 new domains against a DNS server with 1–5 ms latency), start-up time and
 * RSS, and RSS after many evaluations. Everything goes to 127.0.0.1; every loop is bounded.
 *
 *   npm run bench                 # full run (a few minutes)
 *   npm run bench -- --quick      # 3 s runs, one round: a smoke test of the harness
 *   npm run bench -- --evaluations 1000000   # RSS after a million evaluations
 *   npm run bench -- --warm-only  # only the A/B comparison with the ceiling (for profiling work)
 *   npm run bench -- --store-only # only the store: evaluate with the log on vs off (SQLite, PostgreSQL),
 *                                 # the batch writer, look-ups, prune and start-up on a log of --rows evaluations
 *   npm run bench -- --metrics-only  # only the metrics' cost: the service with METRICS_PORT set vs unset, A B A B
 *   npm run bench -- --behaviour-only # only behaviour history: evaluate with it on vs off (SQLite, PostgreSQL),
 *                                 # both mixes and a crowd (a new person from a new address each
 *                                 # request), memory on vs off; per-key cost at 10, 10,000 and
 *                                 # 1,000,000 events;
 *                                 # record() as history grows to --history-keys people (4 identifiers each); storage;
 *                                 # the new-person mix on that grown store vs an empty one
 *   npm run bench -- --velocity-only # only velocity counters: 0, 5 and 20 counters per evaluation, both mixes,
 *                                 # SQLite and PostgreSQL (A B C A B C…)
 *   npm run bench -- --detection-only # only detection quality: precision and recall of `disposable` and
 *                                 # `free_provider` on a labelled set, and what the curated ASN lists flag (bench/detection.ts; also `npm run bench:detection`)
 */
import './temp-root.js';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { Zone } from '../test/support/dns-server.js';
import { generateKey } from '../src/keys/key.js';
import { startPostgres, type PostgresServer } from '../test/support/postgres.js';
import { writeDataSet } from './data-set.js';
import { benchHistory, benchKeyCost, type HistoryFigures, type KeyCostFigures } from './behaviour.js';
import { mixBody, personBody, type Mix } from './mixes.js';
import { velocityRulesDir } from './velocity.js';
import { benchDetection, benchIpAsnLists } from './detection.js';
import { benchStore, loggedEvaluations, type StoreFigures } from './store.js';
import { processCpuSeconds, settled, SETTLE_FLOOR_MS } from './settle.js';
import { startFlags } from './start-flags.js';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'warm-only': { type: 'boolean', default: false },
    'store-only': { type: 'boolean', default: false },
    'metrics-only': { type: 'boolean', default: false },
    'behaviour-only': { type: 'boolean', default: false },
    'detection-only': { type: 'boolean', default: false },
    'velocity-only': { type: 'boolean', default: false },
    'history-keys': { type: 'string' },
    rows: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    evaluations: { type: 'string' },
  },
});
const quick = options.quick!;
const rounds = Number(options.rounds ?? (quick ? 1 : 5));
const duration = Number(options.duration ?? (quick ? 3 : 10));
const warmup = quick ? 1 : 3;
const connections = 50;
const longRun = Number(options.evaluations ?? (quick ? 20_000 : 200_000));
const COLD_DOMAINS = quick ? 2_000 : 10_000;
/** Evaluations in the log for the store's look-up, prune and start-up figures. */
const LOG_ROWS = Number(options.rows ?? (quick ? 100_000 : 1_000_000));
/** Distinct identifiers behaviour history is grown to before record() is timed again. */
/** People (an IP, e-mail, user and device each: four identifiers) the history is grown to: 1,000,000 identifiers by default. */
const HISTORY_KEYS = Number(options['history-keys'] ?? (quick ? 12_500 : 250_000));
/** PostgreSQL's own growth figure stops here (a statement a millisecond; the HTTP comparison is SQLite's). */
const PG_HISTORY_KEYS = quick ? 10_000 : 50_000;

const KEY = generateKey();
const WARM_DOMAIN = 'mail-bench.example';

interface Run {
  target: string;
  /** CPU time of the server process per request (user + system): steadier than req/s on a busy machine. */
  cpu_us_per_request: number | null;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  non_2xx: number;
  total: number;
  /** How long the service took to go idle after the run (its writer catching up): its CPU is in cpu_us_per_request. */
  settled_ms: number;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** `log`: a file for the process's stdout (its JSON log), when the benchmark reads it afterwards. */
function spawnNode(script: string[], env: Record<string, string>, log = '/dev/null'): ChildProcess {
  const sink = openSync(log, 'w');
  return spawn(process.execPath, script, { env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', sink, 'inherit', 'ipc'] });
}

/** `npm start`'s exact V8 flags (package.json), so the benchmark measures the service as shipped. */
const START_FLAGS = startFlags();
/** The service from the built code, with the runtime probe preloaded (see bench/runtime-probe.mjs). */
const SERVICE = [...START_FLAGS, '--import', './bench/runtime-probe.mjs', 'dist/server.js'];

async function waitReady(url: string, child: ChildProcess, limitMs = 60_000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with code ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) return performance.now() - started;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${url} not ready within ${limitMs} ms`);
}

interface Runtime {
  rss_bytes: number;
  event_loop_delay_p99_ms: number;
}

/** SIGTERM, and the process's exit: the service drains and flushes before it goes. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

/** RSS and event-loop delay of a service process, asked over IPC: /readyz no longer shows them. */
function runtimeOf(child: ChildProcess): Promise<Runtime> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as Runtime));
    child.send('runtime');
  });
}

const body = (email: string, ip = '81.2.69.160') => JSON.stringify({ ip, email, event_type: 'account_register', user: { user_id: 'u-1', first_name: 'Jane', last_name: 'Doe' } });

async function drive(target: string, url: string, server: ChildProcess | undefined, init: Partial<autocannon.Options>): Promise<Run> {
  const cpuBefore = processCpuSeconds(server?.pid);
  const result = await autocannon({
    url: `${url}/v1/risk/evaluate`,
    method: 'POST',
    connections,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...init,
  });
  // What the run left the writer thread is the run's: its CPU is counted once the service is idle.
  const settledMs = server === undefined ? 0 : await settled(server.pid);
  const cpuAfter = processCpuSeconds(server?.pid);
  const total = result.requests.total;
  return {
    target,
    cpu_us_per_request: cpuBefore !== null && cpuAfter !== null && total > 0 ? Math.round(((cpuAfter - cpuBefore) * 1e6) / total) : null,
    // Answers over the run's own length: exact for runs bounded by a request count, too.
    requests_per_s: Math.round(result.requests.total / result.duration),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non_2xx: result.non2xx,
    total: result.requests.total,
    settled_ms: settledMs,
  };
}

async function measured(target: string, url: string, server: ChildProcess, init: Partial<autocannon.Options>): Promise<Run> {
  await drive(target, url, undefined, { ...init, duration: warmup });
  // What the warm-up left the writer is not the measured run's (and its CPU is not counted).
  await settled(server.pid);
  return drive(target, url, server, { ...init, duration });
}

/** The middle value; of an even count, the mean of the middle two (of two rounds, not the higher one). */
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * Service against ceiling, round by round: each pair ran back to back, so the machine's drift (a
 * shared host speeds up and slows down by a fifth within minutes) cancels inside a pair; the
 * median of the pairs' ratios is the figure, the range shows the spread.
 */
function compare(warm: Run[], ceiling: Run[]) {
  const pairs = warm.map((w, i) => ({
    throughput: w.requests_per_s / ceiling[i]!.requests_per_s,
    p99: w.p99_ms / Math.max(1, ceiling[i]!.p99_ms),
    cpu: (ceiling[i]!.cpu_us_per_request ?? NaN) / (w.cpu_us_per_request ?? NaN),
  }));
  const of = (key: 'throughput' | 'p99' | 'cpu') => pairs.map((p) => p[key]);
  return {
    ratio: round2(median(of('throughput'))),
    ratio_range: [round2(Math.min(...of('throughput'))), round2(Math.max(...of('throughput')))],
    p99_ratio: round2(median(of('p99'))),
    /** Ceiling's CPU per request over the service's: the throughput ratio if each had a core to itself. */
    cpu_ratio: round2(median(of('cpu'))),
  };
}

async function main(): Promise<void> {
  if (options['detection-only']) {
    if (!(await benchDetection())) throw new Error('a legitimate domain was called disposable or an organisation free');
    if (!benchIpAsnLists()) throw new Error('an access network is on the curated hosting or VPN-service ASN list');
    return;
  }
  const root = mkdtempSync(join(tmpdir(), 'risk-bench-'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  const dataSet = writeDataSet(dataDir);

  // The DNS server, in its own process: one warm domain and COLD_DOMAINS new ones, answered after 1–5 ms.
  const zone: Zone = { [WARM_DOMAIN]: { MX: [{ exchange: 'mx1.mail-bench.example', priority: 10 }] } };
  for (let i = 0; i < COLD_DOMAINS; i += 1) {
    const name = `d${i}.cold-bench.example`;
    zone[name] = { MX: [{ exchange: `mx.${name}`, priority: 10 }] };
  }
  const dnsProcess = fork(new URL('./dns-server-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
  const processes: ChildProcess[] = [dnsProcess];
  const stopAll = () => processes.forEach((p) => p.kill('SIGTERM'));
  process.on('exit', stopAll);
  dnsProcess.send({ zone, latencyMinMs: 1, latencyMaxMs: 5 });
  const dns = await new Promise<{ port: number }>((resolve) => dnsProcess.once('message', (m) => resolve(m as { port: number })));
  const dnsQueries = () =>
    new Promise<string[]>((resolve) => {
      dnsProcess.once('message', (m) => resolve((m as { queries: string[] }).queries));
      dnsProcess.send('stats');
    });

  const serviceEnv = async (store: Record<string, string> = {}) => {
    const port = await freePort();
    return {
      port,
      env: {
        NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: KEY,
        DATA_DIR: dataDir, RULES_DIR: 'rules', DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '1500',
        // On, as in production, with a limit the benchmark cannot reach.
        RATE_LIMIT_MAX: '10000000',
        // A store of its own, in the run's directory (the default would be the checkout's var/).
        DATABASE_URL: `sqlite:${mkdtempSync(join(root, 'store-'))}/risk.sqlite`,
        ...store,
      },
    };
  };

  /**
   * The store's cost on the request path: the same service with the evaluation log on (every
   * evaluation queued and written in batches) and off (RETENTION_DAYS=0), A B A B on one machine.
   */
  const storeOnOff = async (label: string, on: Record<string, string>): Promise<{ on: Run[]; off: Run[]; ratio: number; ratio_range: number[]; p99_added_ms: number; written: number; dropped: number }> => {
    // Both log to a file, so that the one difference between them is the evaluation log.
    const start = async (store: Record<string, string>) => {
      const s = await serviceEnv(store);
      const log = join(mkdtempSync(join(root, 'service-log-')), 'stdout.jsonl');
      const child = spawnNode(SERVICE, s.env, log);
      processes.push(child);
      await waitReady(`http://127.0.0.1:${s.port}`, child);
      return { url: `http://127.0.0.1:${s.port}`, child, database: s.env.DATABASE_URL, log };
    };
    const withLog = await start(on);
    const without = await start({ RETENTION_DAYS: '0' });
    const runsOn: Run[] = [];
    const runsOff: Run[] = [];
    const init = { body: body(`jane@${WARM_DOMAIN}`) };
    for (let round = 0; round < rounds; round += 1) {
      runsOn.push(await measured(`service, ${label} log on`, withLog.url, withLog.child, init));
      runsOff.push(await measured(`service, ${label} log off`, without.url, without.child, init));
      console.error(`store ${label} round ${round + 1}/${rounds}: on ${runsOn.at(-1)!.requests_per_s} req/s, off ${runsOff.at(-1)!.requests_per_s} req/s`);
    }
    const ratios = runsOn.map((r, i) => r.requests_per_s / runsOff[i]!.requests_per_s);
    const p99s = runsOn.map((r, i) => r.p99_ms - runsOff[i]!.p99_ms);
    without.child.kill('SIGTERM');
    // The log's counters left the public /readyz. After a graceful stop (which writes what is still
    // queued): written is what the store holds, dropped what the service's own warnings counted.
    await stop(withLog.child);
    const written = await loggedEvaluations(withLog.database);
    const dropped = readFileSync(withLog.log, 'utf8').split('\n').filter((l) => l.includes('evaluations not recorded'))
      .reduce((sum, l) => sum + (JSON.parse(l) as { dropped: number }).dropped, 0);
    return { on: runsOn, off: runsOff, ratio: round2(median(ratios)), ratio_range: [round2(Math.min(...ratios)), round2(Math.max(...ratios))], p99_added_ms: median(p99s), written, dropped };
  };

  /**
   * The metrics' cost on the request path: the same service with METRICS_PORT set (every response
   * timed, every evaluation counted) and unset (nothing recorded), A B A B. The metered one is
   * scraped after each of its runs, as Prometheus would every few seconds; its count of evaluations
   * must match what autocannon got.
   */
  const metricsOnOff = async () => {
    const start = async (extra: Record<string, string>) => {
      const s = await serviceEnv(extra);
      const child = spawnNode(SERVICE, s.env);
      processes.push(child);
      await waitReady(`http://127.0.0.1:${s.port}`, child);
      return { url: `http://127.0.0.1:${s.port}`, child };
    };
    const metricsPort = await freePort();
    const on = await start({ METRICS_PORT: String(metricsPort) });
    const off = await start({});
    const scrape = async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return [...text.matchAll(/^risk_evaluations_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    };
    const runsOn: Run[] = [];
    const runsOff: Run[] = [];
    const init = { body: body(`jane@${WARM_DOMAIN}`) };
    let sentToMetered = 0;
    for (let round = 0; round < rounds; round += 1) {
      // Warm-up and run, both counted by the metered service.
      const warmed = await drive('service, metrics on (warm-up)', on.url, undefined, { ...init, duration: warmup });
      runsOn.push(await drive('service, metrics on', on.url, on.child, { ...init, duration }));
      sentToMetered += warmed.total - warmed.non_2xx + runsOn.at(-1)!.total - runsOn.at(-1)!.non_2xx;
      runsOff.push(await measured('service, metrics off', off.url, off.child, init));
      console.error(`metrics round ${round + 1}/${rounds}: on ${runsOn.at(-1)!.requests_per_s} req/s, off ${runsOff.at(-1)!.requests_per_s} req/s`);
    }
    const counted = await scrape();
    await Promise.all([stop(on.child), stop(off.child)]);
    const ratios = runsOn.map((r, i) => r.requests_per_s / runsOff[i]!.requests_per_s);
    const cpu = (runs: Run[]) => median(runs.map((x) => x.cpu_us_per_request ?? 0));
    return {
      on: runsOn,
      off: runsOff,
      ratio: round2(median(ratios)),
      ratio_range: [round2(Math.min(...ratios)), round2(Math.max(...ratios))],
      p99_added_ms: median(runsOn.map((r, i) => r.p99_ms - runsOff[i]!.p99_ms)),
      cpu_us_per_request: { on: cpu(runsOn), off: cpu(runsOff) },
      evaluations: { answered: sentToMetered, counted },
    };
  };
  const printMetrics = (m: Awaited<ReturnType<typeof metricsOnOff>>) => {
    console.log('\n| metrics | on req/s | off req/s | on/off (median of pairs) | p99 added ms | service CPU µs/req on / off | evaluations answered / counted |\n|---|---:|---:|---:|---:|---:|---:|');
    console.log(`| METRICS_PORT set vs unset | ${median(m.on.map((x) => x.requests_per_s))} | ${median(m.off.map((x) => x.requests_per_s))} | ${m.ratio} (${m.ratio_range.join('–')}) | ${m.p99_added_ms} | ${m.cpu_us_per_request.on} / ${m.cpu_us_per_request.off} | ${m.evaluations.answered} / ${m.evaluations.counted} |`);
  };

  /** Everything about the store, on SQLite and on a PostgreSQL started here on loopback. */
  const storeBench = async () => {
    let postgres: PostgresServer | undefined;
    try {
      postgres = await startPostgres();
      const sqliteOnOff = await storeOnOff('SQLite', {});
      const postgresOnOff = await storeOnOff('PostgreSQL', { DATABASE_URL: await postgres.createDatabase() });
      const engines: StoreFigures[] = [];
      for (const url of [`sqlite:${mkdtempSync(join(root, 'log-'))}/risk.sqlite`, await postgres.createDatabase()]) {
        engines.push(await benchStore(url, LOG_ROWS, { startUp: true }));
        console.error(`store: ${engines.at(-1)!.engine} done`);
      }
      return { sqlite: sqliteOnOff, postgres: postgresOnOff, engines };
    } finally {
      await postgres?.close();
    }
  };
  const printStore = (store: Awaited<ReturnType<typeof storeBench>>) => {
    // The service's own CPU per request beside req/s: on loopback PostgreSQL's work shares the two cores.
    console.log('\n| store | log on req/s | log off req/s | on/off (median of pairs) | p99 added ms | service CPU µs/req on / off | written | dropped |\n|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const [name, r] of [['SQLite', store.sqlite], ['PostgreSQL', store.postgres]] as const) {
      const cpu = (runs: Run[]) => median(runs.map((x) => x.cpu_us_per_request ?? 0));
      console.log(`| ${name} | ${median(r.on.map((x) => x.requests_per_s))} | ${median(r.off.map((x) => x.requests_per_s))} | ${r.ratio} (${r.ratio_range.join('–')}) | ${r.p99_added_ms} | ${cpu(r.on)} / ${cpu(r.off)} | ${r.written} | ${r.dropped} |`);
    }
    console.log(`\n| engine | rows | writer rows/s | by id mean / p99 ms | by e-mail mean / p99 ms | prune rows, ms | size MB | start-up ms |\n|---|---:|---:|---:|---:|---:|---:|---:|`);
    for (const e of store.engines) {
      console.log(`| ${e.engine} | ${e.rows} | ${e.writes_per_s} | ${e.lookup_by_id_ms.mean} / ${e.lookup_by_id_ms.p99} | ${e.lookup_by_email_ms.mean} / ${e.lookup_by_email_ms.p99} | ${e.prune.rows} in ${e.prune.ms} | ${e.size_mb} | ${e.start_up_ms} |`);
    }
  };
  /**
   * Memory's cost on the request path (issue 24): the same service as shipped, history and log on,
   * against one with both off (HISTORY_DAYS=0, RETENTION_DAYS=0), A B A B, on the two mixes: one
   * person repeated (same IP, user, device) and a new person every request (new e-mail, user and
   * device; one IP). Both pass `ip_velocity`'s thresholds once memory holds the address, and answer
   * `review`; `crowd` (a new person from an address of their own each request, bench/mixes.ts) is
   * answered `approve` either way: what remembering costs when it does not change the answer.
   * `store`: the engine's DATABASE_URL (SQLite by default).
   */
  const behaviourOnOff = async (label: string, store: Record<string, string>, keys: Mix) => {
    const start = async (env: Record<string, string>) => {
      const s = await serviceEnv({ ...store, ...env });
      const child = spawnNode(SERVICE, s.env);
      processes.push(child);
      await waitReady(`http://127.0.0.1:${s.port}`, child);
      return { url: `http://127.0.0.1:${s.port}`, child };
    };
    const on = await start({});
    const off = await start({ HISTORY_DAYS: '0', RETENTION_DAYS: '0' });
    let n = 0;
    const init: Partial<autocannon.Options> = keys === 'same'
      ? { body: mixBody('same', 0, WARM_DOMAIN) }
      : { requests: [{ setupRequest: (request) => ({ ...request, body: mixBody(keys, (n += 1), WARM_DOMAIN) }) }] };
    const runsOn: Run[] = [];
    const runsOff: Run[] = [];
    for (let round = 0; round < Math.min(rounds, 3); round += 1) {
      runsOn.push(await measured(`service, ${label} ${keys} memory on`, on.url, on.child, init));
      runsOff.push(await measured(`service, ${label} ${keys} memory off`, off.url, off.child, init));
      console.error(`memory ${label} ${keys} round ${round + 1}: on ${runsOn.at(-1)!.requests_per_s} req/s (p99 ${runsOn.at(-1)!.p99_ms} ms), off ${runsOff.at(-1)!.requests_per_s} req/s (p99 ${runsOff.at(-1)!.p99_ms} ms)`);
    }
    await Promise.all([stop(on.child), stop(off.child)]);
    const ratios = runsOn.map((r, i) => r.requests_per_s / runsOff[i]!.requests_per_s);
    return {
      label, keys, on: runsOn, off: runsOff,
      ratio: round2(median(ratios)), ratio_range: [round2(Math.min(...ratios)), round2(Math.max(...ratios))],
      p99_added_ms: median(runsOn.map((r, i) => r.p99_ms - runsOff[i]!.p99_ms)),
      cpu_us: [median(runsOn.map((r) => r.cpu_us_per_request ?? 0)), median(runsOff.map((r) => r.cpu_us_per_request ?? 0))],
    };
  };

  /**
   * The new-person mix (HTTP, as shipped) on a store that already holds `persons` people's
   * identifiers (grown in-process by benchHistory) against the same mix on an empty store, A B A B.
   */
  const grownOnOff = async (grown: string, persons: number) => {
    const start = async (url: string) => {
      const s = await serviceEnv({ DATABASE_URL: url });
      const child = spawnNode(SERVICE, s.env);
      processes.push(child);
      const readyMs = await waitReady(`http://127.0.0.1:${s.port}`, child, 180_000);
      return { url: `http://127.0.0.1:${s.port}`, child, readyMs };
    };
    const full = await start(grown);
    const empty = await start(`sqlite:${mkdtempSync(join(root, 'empty-'))}/risk.sqlite`);
    let n = 5_000_000;
    const init: Partial<autocannon.Options> = { requests: [{ setupRequest: (request) => ({ ...request, body: personBody((n += 1), WARM_DOMAIN) }) }] };
    const runsFull: Run[] = [];
    const runsEmpty: Run[] = [];
    for (let round = 0; round < Math.min(rounds, 3); round += 1) {
      runsFull.push(await measured(`service, new person, ${persons} people stored`, full.url, full.child, init));
      runsEmpty.push(await measured('service, new person, empty store', empty.url, empty.child, init));
    }
    await Promise.all([stop(full.child), stop(empty.child)]);
    const ratios = runsFull.map((r, i) => r.requests_per_s / runsEmpty[i]!.requests_per_s);
    return {
      persons, ready_ms: [Math.round(full.readyMs), Math.round(empty.readyMs)], full: runsFull, empty: runsEmpty,
      ratio: round2(median(ratios)), ratio_range: [round2(Math.min(...ratios)), round2(Math.max(...ratios))],
      cpu_us: [median(runsFull.map((r) => r.cpu_us_per_request ?? 0)), median(runsEmpty.map((r) => r.cpu_us_per_request ?? 0))],
    };
  };

  const behaviourBench = async () => {
    let postgres: PostgresServer | undefined;
    try {
      postgres = await startPostgres();
      const onOff = [];
      for (const keys of ['same', 'new', 'crowd'] as const) {
        onOff.push(await behaviourOnOff('SQLite', {}, keys));
        onOff.push(await behaviourOnOff('PostgreSQL', { DATABASE_URL: await postgres.createDatabase() }, keys));
      }
      const keyCost: KeyCostFigures[] = [];
      for (const events of [10, 10_000, 1_000_000]) {
        keyCost.push(await benchKeyCost(`sqlite:${mkdtempSync(join(root, 'key-cost-'))}/risk.sqlite`, events));
        keyCost.push(await benchKeyCost(await postgres.createDatabase(), events));
      }
      const growth: HistoryFigures[] = [];
      const grownSqlite = `sqlite:${mkdtempSync(join(root, 'history-'))}/risk.sqlite`;
      growth.push(await benchHistory(grownSqlite, HISTORY_KEYS));
      // PostgreSQL grows at about a millisecond a statement: bounded to keep the bench to minutes.
      growth.push(await benchHistory(await postgres.createDatabase(), Math.min(HISTORY_KEYS, PG_HISTORY_KEYS)));
      const grown = await grownOnOff(grownSqlite, HISTORY_KEYS);
      return { onOff, keyCost, growth, grown };
    } finally {
      await postgres?.close();
    }
  };
  const printBehaviour = (b: Awaited<ReturnType<typeof behaviourBench>>) => {
    console.log('\n| memory (history + log) | mix | on req/s | off req/s | on/off (median of pairs) | p99 on / off ms | p99 added ms | service CPU µs/req on / off |\n|---|---|---:|---:|---:|---:|---:|---:|');
    for (const r of b.onOff) {
      console.log(`| ${r.label} | ${r.keys} | ${median(r.on.map((x) => x.requests_per_s))} | ${median(r.off.map((x) => x.requests_per_s))} | ${r.ratio} (${r.ratio_range.join('–')}) | ${median(r.on.map((x) => x.p99_ms))} / ${median(r.off.map((x) => x.p99_ms))} | ${r.p99_added_ms} | ${r.cpu_us.join(' / ')} |`);
    }
    console.log('\n| engine | events the IP holds in its windows | record() µs of a new person from it (mean / p99) |\n|---|---:|---:|');
    for (const k of b.keyCost) console.log(`| ${k.engine} | ${k.events} | ${k.record_us.mean} / ${k.record_us.p99} |`);
    console.log('\n| engine | record() µs, one hot key (mean / p99) | first distinct keys | after N distinct keys | N | refused (of the timed: first / last / hot) | history MB per million evaluations |\n|---|---:|---:|---:|---:|---:|---:|');
    for (const g of b.growth) {
      console.log(`| ${g.engine} | ${g.hot_us.mean} / ${g.hot_us.p99} | ${g.distinct_first_us.mean} / ${g.distinct_first_us.p99} | ${g.distinct_last_us.mean} / ${g.distinct_last_us.p99} | ${g.evaluations} | ${g.refused} (${g.refused_timed.first} / ${g.refused_timed.last} / ${g.refused_timed.hot}) | ${g.mb_per_million} |`);
    }
    const g = b.grown;
    console.log(`\nnew person every request (HTTP, SQLite as shipped) with ${g.persons} people (${g.persons * 4} identifiers) stored vs an empty store: ${g.ratio} (rounds ${g.ratio_range.join('–')}); ` +
      `req/s ${median(g.full.map((r) => r.requests_per_s))} vs ${median(g.empty.map((r) => r.requests_per_s))}; CPU µs/request ${g.cpu_us.join(' vs ')}; time to ready ${g.ready_ms.join(' vs ')} ms`);
  };

  /**
   * Velocity counters' cost (issue 28): the service as shipped with 0, 5 and 20 counters in
   * account_register.yaml (bench/velocity.ts: each its own series, all read by a rule), in turns,
   * on one mix and engine. Each service has a store of its own.
   */
  const velocityCounts = async (label: string, store: () => Promise<Record<string, string>>, keys: 'same' | 'new') => {
    const COUNTS = [0, 5, 20];
    const services = [];
    for (const counters of COUNTS) {
      const s = await serviceEnv({ ...(await store()), RULES_DIR: velocityRulesDir(root, counters) });
      const child = spawnNode(SERVICE, s.env);
      processes.push(child);
      // Each starts beside the ones already running: a busy machine needs longer than the default.
      await waitReady(`http://127.0.0.1:${s.port}`, child, 180_000);
      services.push({ counters, url: `http://127.0.0.1:${s.port}`, child, runs: [] as Run[] });
    }
    let n = 0;
    const init: Partial<autocannon.Options> = keys === 'same'
      ? { body: personBody(7, WARM_DOMAIN) }
      : { requests: [{ setupRequest: (request) => ({ ...request, body: personBody((n += 1), WARM_DOMAIN) }) }] };
    for (let round = 0; round < Math.min(rounds, 3); round += 1) {
      for (const s of services) s.runs.push(await measured(`service, ${label} ${keys}, ${s.counters} counters`, s.url, s.child, init));
      console.error(`velocity ${label} ${keys} round ${round + 1}: ${services.map((s) => `${s.counters}: ${s.runs.at(-1)!.requests_per_s} req/s`).join(', ')}`);
    }
    await Promise.all(services.map((s) => stop(s.child)));
    const base = services[0]!.runs;
    return {
      label, keys,
      counters: services.map((s) => ({
        counters: s.counters,
        requests_per_s: median(s.runs.map((r) => r.requests_per_s)),
        p99_ms: median(s.runs.map((r) => r.p99_ms)),
        cpu_us: median(s.runs.map((r) => r.cpu_us_per_request ?? 0)),
        // Against 0 counters in the same rounds.
        ratio: round2(median(s.runs.map((r, i) => r.requests_per_s / base[i]!.requests_per_s))),
      })),
    };
  };
  const velocityBench = async () => {
    let postgres: PostgresServer | undefined;
    try {
      postgres = await startPostgres();
      const pg = postgres;
      const results = [];
      for (const keys of ['same', 'new'] as const) {
        results.push(await velocityCounts('SQLite', async () => ({}), keys));
        results.push(await velocityCounts('PostgreSQL', async () => ({ DATABASE_URL: await pg.createDatabase() }), keys));
      }
      return results;
    } finally {
      await postgres?.close();
    }
  };
  const printVelocity = (v: Awaited<ReturnType<typeof velocityBench>>) => {
    console.log('\n| velocity counters | mix | counters | req/s | vs 0 counters (median of rounds) | p99 ms | service CPU µs/req |\n|---|---|---:|---:|---:|---:|---:|');
    for (const r of v) {
      for (const c of r.counters) console.log(`| ${r.label} | ${r.keys} | ${c.counters} | ${c.requests_per_s} | ${c.ratio} | ${c.p99_ms} | ${c.cpu_us} |`);
    }
  };

  const writeResults = (summary: unknown) => {
    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
    writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
    console.log(`\nwritten to ${file}`);
  };

  /** One part of the benchmark alone (`--metrics-only`, `--store-only`). */
  const alone = async <T>(name: string, bench: () => Promise<T>, print: (figures: T) => void) => {
    try {
      const figures = await bench();
      print(figures);
      writeResults({ machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }, settings: { connections, duration_s: duration, warmup_s: warmup, rounds }, [name]: figures });
    } finally {
      stopAll();
      dnsProcess.send('close');
    }
  };
  if (options['metrics-only']) return alone('metrics', metricsOnOff, printMetrics);
  if (options['store-only']) return alone('store', storeBench, printStore);
  if (options['behaviour-only']) return alone('behaviour', behaviourBench, printBehaviour);
  if (options['velocity-only']) return alone('velocity', velocityBench, printVelocity);

  const service = await serviceEnv();
  const serviceUrl = `http://127.0.0.1:${service.port}`;
  const serviceProcess = spawnNode(SERVICE, service.env);
  processes.push(serviceProcess);
  const readyMs = await waitReady(serviceUrl, serviceProcess);
  const afterStart = await runtimeOf(serviceProcess);
  const sample = await (await fetch(`${serviceUrl}/v1/risk/evaluate`, {
    method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: personBody(7, WARM_DOMAIN),
  })).text();

  const ceilingPort = await freePort();
  const ceilingUrl = `http://127.0.0.1:${ceilingPort}`;
  const ceilingProcess = spawnNode(['bench/ceiling.mjs'], { PORT: String(ceilingPort), API_KEYS: KEY, CEILING_RESPONSE: sample });
  processes.push(ceilingProcess);
  await waitReady(ceilingUrl, ceilingProcess);


  try {
    // A B C B…: the machine's drift affects both sides alike. The service as shipped (history and
    // log on, SQLite) on issue 24's two mixes: one person repeated, and a new person (e-mail, user,
    // device) every request from one IP; the ceiling between them.
    const warm: Run[] = [];
    const ceiling: Run[] = [];
    const newPerson: Run[] = [];
    const ceilingNew: Run[] = [];
    let person = 1_000;
    const newPersonInit: Partial<autocannon.Options> = { requests: [{ setupRequest: (request) => ({ ...request, body: personBody((person += 1), WARM_DOMAIN) }) }] };
    for (let round = 0; round < rounds; round += 1) {
      warm.push(await measured('service, one person repeated', serviceUrl, serviceProcess, { body: personBody(7, WARM_DOMAIN) }));
      ceiling.push(await measured('ceiling', ceilingUrl, ceilingProcess, { body: personBody(7, WARM_DOMAIN) }));
      newPerson.push(await measured('service, a new person every request', serviceUrl, serviceProcess, newPersonInit));
      ceilingNew.push(await measured('ceiling', ceilingUrl, ceilingProcess, newPersonInit));
      console.error(`round ${round + 1}/${rounds}: one person ${warm.at(-1)!.requests_per_s} req/s, new person ${newPerson.at(-1)!.requests_per_s} req/s, ceiling ${ceiling.at(-1)!.requests_per_s} / ${ceilingNew.at(-1)!.requests_per_s} req/s`);
    }
    const printMixes = () => {
      for (const [label, service, bare] of [['one person repeated', warm, ceiling], ['a new person every request', newPerson, ceilingNew]] as const) {
        const c = compare(service, bare);
        console.log(`${label}: service/ceiling ${c.ratio} (rounds ${c.ratio_range.join('–')}); p99 ${median(service.map((r) => r.p99_ms))} ms (ceiling ${median(bare.map((r) => r.p99_ms))}); ` +
          `CPU per request ${median(service.map((r) => r.cpu_us_per_request ?? 0))} µs (ceiling ${median(bare.map((r) => r.cpu_us_per_request ?? 0))}; ratio ${c.cpu_ratio}; ` +
          `the service idle again ${median(service.map((r) => r.settled_ms))} ms after a round, ${SETTLE_FLOOR_MS} of them to tell, its CPU counted)`);
      }
    };
    if (options['warm-only']) {
      printMixes();
      return;
    }
    const invalid = await measured('service (400: invalid body)', serviceUrl, serviceProcess, {
      body: JSON.stringify({ ip: '1.2.3', email: 'not-an-address', event_type: 'account_register', user: { first_name: 5 } }),
    });

    // The cold path, on a fresh process: every request a domain it has never seen.
    const cold = await serviceEnv();
    const coldUrl = `http://127.0.0.1:${cold.port}`;
    const coldProcess = spawnNode(SERVICE, cold.env);
    processes.push(coldProcess);
    await waitReady(coldUrl, coldProcess);
    let next = 0;
    const coldRun = await drive(`service (cold: ${COLD_DOMAINS} new domains)`, coldUrl, coldProcess, {
      amount: COLD_DOMAINS,
      requests: [{ setupRequest: (request) => ({ ...request, body: body(`jane@d${next++ % COLD_DOMAINS}.cold-bench.example`) }) }],
    });
    const coldRuntime = await runtimeOf(coldProcess);
    const coldQueries = (await dnsQueries()).filter((name) => name.endsWith('.cold-bench.example')).length;

    // Many evaluations over varied domains and addresses: caches must stay bounded.
    let i = 0;
    const longRunResult = await drive(`service (${longRun} varied evaluations)`, serviceUrl, serviceProcess, {
      amount: longRun,
      requests: [{
        setupRequest: (request) => {
          i += 1;
          return { ...request, body: body(`user${i}@d${i % COLD_DOMAINS}.cold-bench.example`, `${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}.${1 + (i % 250)}`) };
        },
      }],
    });
    const afterLong = await runtimeOf(serviceProcess);
    const metrics = await metricsOnOff();
    const store = await storeBench();
    const behaviour = await behaviourBench();
    const velocity = await velocityBench();

    const serviceRps = median(warm.map((r) => r.requests_per_s));
    const ceilingRps = median(ceiling.map((r) => r.requests_per_s));
    const summary = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version },
      settings: { connections, duration_s: duration, warmup_s: warmup, rounds },
      data_set: dataSet,
      start_up: { time_to_ready_ms: Math.round(readyMs), rss_mb: Math.round(afterStart.rss_bytes / 2 ** 20) },
      warm: { runs: warm, median_rps: serviceRps },
      ceiling: { runs: ceiling, median_rps: ceilingRps },
      ...compare(warm, ceiling),
      new_person: { runs: newPerson, ceiling: ceilingNew, ...compare(newPerson, ceilingNew) },
      invalid,
      cold: { run: coldRun, event_loop_delay_p99_ms: coldRuntime.event_loop_delay_p99_ms, dns_queries: coldQueries, queries_per_domain: Math.round((coldQueries / COLD_DOMAINS) * 100) / 100 },
      long_run: { run: longRunResult, rss_mb_after: Math.round(afterLong.rss_bytes / 2 ** 20) },
      response_bytes: Buffer.byteLength(sample),
      metrics,
      store,
      behaviour,
      velocity,
    };

    const rows = [...warm, ...ceiling, ...newPerson, ...ceilingNew, invalid, coldRun, longRunResult];
    console.log('\n| target | req/s | p50 ms | p99 ms | CPU µs/req | errors | non-2xx | requests |\n|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.target} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.cpu_us_per_request ?? '-'} | ${r.errors} | ${r.non_2xx} | ${r.total} |`);
    console.log(
      `\nservice/ceiling: ${summary.ratio} (median of ${rounds} paired rounds, range ${summary.ratio_range.join('–')}; median req/s ${serviceRps} vs ${ceilingRps}); ` +
        `p99 service/ceiling: ${summary.p99_ratio}; CPU per request ceiling/service: ${summary.cpu_ratio}`,
    );
    printMixes();
    console.log(`start-up: ${summary.start_up.time_to_ready_ms} ms to ready, RSS ${summary.start_up.rss_mb} MB; after ${longRun} varied evaluations: RSS ${summary.long_run.rss_mb_after} MB`);
    console.log(`cold path: ${coldRun.requests_per_s} req/s, p99 ${coldRun.p99_ms} ms, event-loop delay p99 ${coldRuntime.event_loop_delay_p99_ms} ms, ${summary.cold.queries_per_domain} DNS queries per new domain`);
    printMetrics(metrics);
    printStore(store);
    printBehaviour(behaviour);
    printVelocity(velocity);
    writeResults(summary);
  } finally {
    stopAll();
    dnsProcess.send('close');
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);
