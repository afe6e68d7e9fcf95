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
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { Zone } from '../test/support/dns-server.js';
import { generateKey } from '../src/keys/key.js';
import { writeDataSet } from './data-set.js';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'warm-only': { type: 'boolean', default: false },
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

function spawnNode(script: string[], env: Record<string, string>): ChildProcess {
  const sink = openSync('/dev/null', 'w');
  return spawn(process.execPath, script, { env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', sink, 'inherit', 'ipc'] });
}

/** The service from the built code, with the runtime probe preloaded (see bench/runtime-probe.mjs). */
const SERVICE = ['--import', './bench/runtime-probe.mjs', 'dist/server.js'];

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

/** RSS and event-loop delay of a service process, asked over IPC: /readyz no longer shows them. */
function runtimeOf(child: ChildProcess): Promise<Runtime> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as Runtime));
    child.send('runtime');
  });
}

const body = (email: string, ip = '81.2.69.160') => JSON.stringify({ ip, email, event_type: 'account_register', user: { user_id: 'u-1', first_name: 'Jane', last_name: 'Doe' } });

/** User + system CPU seconds of a process so far, from /proc (Linux); `null` elsewhere. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

async function drive(target: string, url: string, server: ChildProcess | undefined, init: Partial<autocannon.Options>): Promise<Run> {
  const cpuBefore = cpuSeconds(server?.pid);
  const result = await autocannon({
    url: `${url}/v1/risk/evaluate`,
    method: 'POST',
    connections,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...init,
  });
  const cpuAfter = cpuSeconds(server?.pid);
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
  };
}

async function measured(target: string, url: string, server: ChildProcess, init: Partial<autocannon.Options>): Promise<Run> {
  await drive(target, url, undefined, { ...init, duration: warmup });
  return drive(target, url, server, { ...init, duration });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
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

  const serviceEnv = async () => {
    const port = await freePort();
    return {
      port,
      env: {
        NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: KEY,
        DATA_DIR: dataDir, RULES_DIR: 'rules', DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '1500',
        // On, as in production, with a limit the benchmark cannot reach.
        RATE_LIMIT_MAX: '10000000',
      },
    };
  };

  const service = await serviceEnv();
  const serviceUrl = `http://127.0.0.1:${service.port}`;
  const serviceProcess = spawnNode(SERVICE, service.env);
  processes.push(serviceProcess);
  const readyMs = await waitReady(serviceUrl, serviceProcess);
  const afterStart = await runtimeOf(serviceProcess);
  const sample = await (await fetch(`${serviceUrl}/v1/risk/evaluate`, {
    method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: body(`jane@${WARM_DOMAIN}`),
  })).text();

  const ceilingPort = await freePort();
  const ceilingUrl = `http://127.0.0.1:${ceilingPort}`;
  const ceilingProcess = spawnNode(['bench/ceiling.mjs'], { PORT: String(ceilingPort), API_KEYS: KEY, CEILING_RESPONSE: sample });
  processes.push(ceilingProcess);
  await waitReady(ceilingUrl, ceilingProcess);


  try {
    // A B A B…: the machine's drift affects both sides alike.
    const warm: Run[] = [];
    const ceiling: Run[] = [];
    for (let round = 0; round < rounds; round += 1) {
      warm.push(await measured('service (cached domain)', serviceUrl, serviceProcess, { body: body(`jane@${WARM_DOMAIN}`) }));
      ceiling.push(await measured('ceiling', ceilingUrl, ceilingProcess, { body: body(`jane@${WARM_DOMAIN}`) }));
      console.error(`round ${round + 1}/${rounds}: service ${warm.at(-1)!.requests_per_s} req/s, ceiling ${ceiling.at(-1)!.requests_per_s} req/s`);
    }
    if (options['warm-only']) {
      const c = compare(warm, ceiling);
      console.log(`service/ceiling: ${c.ratio} (rounds ${c.ratio_range.join('–')}); p99 service/ceiling ${c.p99_ratio}; CPU ceiling/service ${c.cpu_ratio}`);
      console.log(`CPU per request: service ${median(warm.map((r) => r.cpu_us_per_request ?? 0))} µs, ceiling ${median(ceiling.map((r) => r.cpu_us_per_request ?? 0))} µs`);
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
      invalid,
      cold: { run: coldRun, event_loop_delay_p99_ms: coldRuntime.event_loop_delay_p99_ms, dns_queries: coldQueries, queries_per_domain: Math.round((coldQueries / COLD_DOMAINS) * 100) / 100 },
      long_run: { run: longRunResult, rss_mb_after: Math.round(afterLong.rss_bytes / 2 ** 20) },
      response_bytes: Buffer.byteLength(sample),
    };

    const rows = [...warm, ...ceiling, invalid, coldRun, longRunResult];
    console.log('\n| target | req/s | p50 ms | p99 ms | CPU µs/req | errors | non-2xx | requests |\n|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.target} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.cpu_us_per_request ?? '-'} | ${r.errors} | ${r.non_2xx} | ${r.total} |`);
    console.log(
      `\nservice/ceiling: ${summary.ratio} (median of ${rounds} paired rounds, range ${summary.ratio_range.join('–')}; median req/s ${serviceRps} vs ${ceilingRps}); ` +
        `p99 service/ceiling: ${summary.p99_ratio}; CPU per request ceiling/service: ${summary.cpu_ratio}`,
    );
    console.log(`start-up: ${summary.start_up.time_to_ready_ms} ms to ready, RSS ${summary.start_up.rss_mb} MB; after ${longRun} varied evaluations: RSS ${summary.long_run.rss_mb_after} MB`);
    console.log(`cold path: ${coldRun.requests_per_s} req/s, p99 ${coldRun.p99_ms} ms, event-loop delay p99 ${coldRuntime.event_loop_delay_p99_ms} ms, ${summary.cold.queries_per_domain} DNS queries per new domain`);

    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
    writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
    console.log(`\nwritten to ${file}`);
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
