/**
 * `npm run soak`: a bounded run of sustained load with many distinct domains and IPs, on 127.0.0.1
 * only. Prints its figures and exits non-zero when a bound is broken.
 *
 * The service runs in this process, built by the production factory (so its caches can be read
 * directly); the DNS server (bench/dns-server-process.ts, 1–5 ms per answer) and the load
 * generator (autocannon, this script with `--role load`) each run in their own process, so the
 * RSS measured is the service's. `npm run soak` starts Node with a bounded heap
 * (`--max-old-space-size=224 --max-semi-space-size=8 --heap-growing-percent=100`), as the
 * Dockerfile and `npm start` start the service; run without it, the soak fails (V8 would reserve
 * two to three times the live heap, which is not what production runs).
 *
 *   npm run soak                              # 150 s
 *   npm run soak -- --duration 30             # shorter
 *   npm run soak -- --max-rss-mb 400 --max-growth-mb 48
 *   npm run soak -- --hostile-every 0         # without hostile answers, to compare
 *   npm run soak -- --heap-snapshots /tmp/s   # V8 heap snapshots after the warm-up and at the end
 *                                             # of the load, to see what holds the heap (each
 *                                             # stalls the service and grows RSS: read no bound then)
 *
 * One request in --hostile-every (20) is for a fresh domain of a hostile DNS: its MX answer holds
 * some 3,000 records of ~245-character names (64 KB over TCP, by name compression), as a
 * fraudster's own name server can send.
 *
 * Bounds (flags): every request answered 200; RSS never above --max-rss-mb (512); RSS at the end
 * of the load no more than --max-growth-mb (96) above RSS after the warm-up (a leak grows without levelling
 * off); the DNS cache never above its bounds in entries and in (estimated) bytes, and the queries
 * in flight never above their cap. Past --abort-rss-mb (1024) the load stops at once: the bound is
 * broken anyway, and a runaway must not take a shared machine down with it.
 */
import '../bench/temp-root.js';
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';
import autocannon from 'autocannon';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { RESOLVER_DEFAULTS } from '../src/dns/resolver.js';
import { createEmailInspector } from '../src/email/index.js';
import { generateKey } from '../src/keys/key.js';
import { createLogger } from '../src/logger.js';
import { LOG_DEFAULTS } from '../src/store/evaluation-log.js';
import { SQLITE_HISTORY_DEFAULTS } from '../src/store/history-sqlite.js';
import type { Zone } from '../test/support/dns-server.js';

const { values: options } = parseArgs({
  options: {
    role: { type: 'string', default: 'service' },
    duration: { type: 'string', default: '150' },
    warmup: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
    'max-rss-mb': { type: 'string', default: '512' },
    'max-growth-mb': { type: 'string', default: '96' },
    'abort-rss-mb': { type: 'string', default: '1024' },
    'hostile-every': { type: 'string', default: '20' },
    'heap-snapshots': { type: 'string' },
  },
});

/** Domains with MX records in the zone: more than the DNS cache holds, so it must evict. */
const ZONE_DOMAINS = 30_000;
const MB = 2 ** 20;

interface LoadOrder {
  url: string;
  key: string;
  durationS: number;
  connections: number;
  /** One request in this many is for a hostile domain; 0: none. */
  hostileEvery: number;
}

interface LoadReport {
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  distinct_domains: number;
  distinct_ips: number;
}

/**
 * The load generator's request n: a fresh domain whose MX answer is hostile (one in
 * `hostileEvery`), else a zone domain, a domain that does not exist (NXDOMAIN) or a big provider;
 * a new IP.
 */
function bodyFor(n: number, hostileEvery: number): { email: string; ip: string } {
  const kind = n % 20;
  const email =
    hostileEvery > 0 && n % hostileEvery === 0
      ? `user${n}@h${n}.hostile.soak.example`
      : kind < 12
        ? `user${n}@d${(n * 7919) % ZONE_DOMAINS}.soak.example`
        : kind < 18
          ? `user${n}@nx${n}.soak.example`
          : `jane.${n}@gmail.com`;
  const ip =
    n % 4 === 0
      ? `2001:db8:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}::${(n % 251) + 1}`
      : `${(n % 223) + 1}.${(n >>> 8) & 255}.${(n >>> 16) & 255}.${n & 255}`;
  return { email, ip };
}

async function runLoad(order: LoadOrder): Promise<LoadReport> {
  let n = 0;
  const domains = new Set<string>();
  const ips = new Set<string>();
  const result = await autocannon({
    url: `${order.url}/v1/risk/evaluate`,
    method: 'POST',
    connections: order.connections,
    duration: order.durationS,
    headers: { authorization: `Bearer ${order.key}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => {
          const body = bodyFor(n++, order.hostileEvery);
          // Counted for the first 200,000 only: the generator must not be what grows.
          if (domains.size < 200_000) domains.add(body.email.split('@')[1]!);
          if (ips.size < 200_000) ips.add(body.ip);
          return { ...request, body: JSON.stringify({ ...body, event_type: 'account_register' }) };
        },
      },
    ],
  });
  return {
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
    distinct_domains: domains.size,
    distinct_ips: ips.size,
  };
}

async function loadRole(): Promise<void> {
  const order = await new Promise<LoadOrder>((resolve) => process.once('message', (m) => resolve(m as LoadOrder)));
  process.send!(await runLoad(order));
  process.disconnect();
}

async function startDns(): Promise<{ port: number; close: () => void }> {
  const zone: Zone = {
    'gmail.com': { MX: [{ exchange: 'gmail-smtp-in.l.google.com', priority: 5 }] },
    '*.hostile.soak.example': { hugeMx: true },
  };
  for (let i = 0; i < ZONE_DOMAINS; i += 1) {
    // Short TTLs, so entries also expire and are asked for again during the run.
    zone[`d${i}.soak.example`] = { MX: [{ exchange: `mx.d${i}.soak.example`, priority: 10 }], ttl: 5 + (i % 55) };
  }
  const dns = fork(new URL('../bench/dns-server-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
  dns.send({ zone, latencyMinMs: 1, latencyMaxMs: 5 });
  const { port } = await new Promise<{ port: number }>((resolve) => dns.once('message', (m) => resolve(m as { port: number })));
  return { port, close: () => dns.send('close') };
}

async function serviceRole(): Promise<number> {
  const durationS = Number(options.duration);
  const warmupS = Number(options.warmup);
  const maxRss = Number(options['max-rss-mb']) * MB;
  const maxGrowth = Number(options['max-growth-mb']) * MB;
  const abortRss = Number(options['abort-rss-mb']) * MB;
  const key = generateKey();
  const dns = await startDns();

  const config = loadConfig({
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: '0',
    API_KEYS: key,
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'risk-soak-')),
    RULES_DIR: 'rules',
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    // On, as in production, with a limit the run cannot reach.
    RATE_LIMIT_MAX: '10000000',
  });
  const logger = createLogger(config.logLevel);
  const email = await createEmailInspector({ config, logger });
  const app = await buildApp(config, { logger, resources: { email } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  const rssAtBoot = process.memoryUsage().rss;
  const samples: Array<{ t: number; rss: number; heap: number; heapTotal: number; external: number; cache: number; cacheBytes: number; inFlight: number; logQueued: number; logBytes: number; history: number; historyBytes: number }> = [];
  const snapshots = options['heap-snapshots'];
  if (snapshots !== undefined) mkdirSync(snapshots, { recursive: true });
  /** Blocks the service for seconds: the load's latency figures are not to be read from such a run. */
  const snapshot = (name: string) => snapshots !== undefined && console.log(`heap snapshot: ${writeHeapSnapshot(join(snapshots, `${name}.heapsnapshot`))}`);
  let warmupSnapshot = false;
  const started = performance.now();
  const load = fork(new URL(import.meta.url), ['--role', 'load'], { execArgv: ['--import', 'tsx'] });
  let aborted: string | null = null;
  const sample = () => {
    const memory = process.memoryUsage();
    const { resolver } = email;
    const t = (performance.now() - started) / 1000;
    const { log, history } = app.store.status();
    samples.push({
      t, rss: memory.rss, heap: memory.heapUsed, heapTotal: memory.heapTotal, external: memory.external, cache: resolver.cacheSize, cacheBytes: resolver.cacheBytes, inFlight: resolver.inFlight,
      logQueued: log.queued, logBytes: log.queued_bytes, history: history?.cached ?? 0, historyBytes: history?.bytes ?? 0,
    });
    if (t >= warmupS && !warmupSnapshot) {
      warmupSnapshot = true;
      snapshot('after-warmup');
    }
    if (memory.rss > abortRss && aborted === null) {
      aborted = `RSS ${Math.round(memory.rss / MB)} MB after ${Math.round(t)} s, past --abort-rss-mb ${options['abort-rss-mb']}: load stopped`;
      load.kill();
    }
  };
  const sampler = setInterval(sample, 1000);

  load.send({ url, key, durationS, connections: Number(options.connections), hostileEvery: Number(options['hostile-every']) } satisfies LoadOrder);
  // `null` when the load was stopped past --abort-rss-mb.
  const report = await new Promise<LoadReport | null>((resolve, reject) => {
    load.once('message', (m) => resolve(m as LoadReport));
    load.once('exit', (code) => (aborted === null ? reject(new Error(`the load generator exited (${code}) without a report`)) : resolve(null)));
  });
  sample();
  clearInterval(sampler);
  snapshot('end-of-load');
  const { log, history } = app.store.status();
  // What the heap holds live, without the garbage not yet collected (`node --expose-gc`, or after a snapshot).
  globalThis.gc?.();
  const live = snapshots !== undefined || globalThis.gc !== undefined ? process.memoryUsage().heapUsed : null;
  await app.close();
  dns.close();

  const afterWarmup = samples.find((s) => s.t >= warmupS) ?? samples[0]!;
  // The last sample taken while the load still ran: after it, the service idles and RSS drops.
  const end = samples.findLast((s) => s.t <= durationS) ?? samples.at(-1)!;
  const idle = samples.at(-1)!;
  const peak = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
  const peakCache = Math.max(...samples.map((s) => s.cache));
  const peakCacheBytes = Math.max(...samples.map((s) => s.cacheBytes));
  const limits = email.resolver.cacheLimits;
  const peakInFlight = Math.max(...samples.map((s) => s.inFlight));
  const failed = report === null ? null : report.non2xx + report.errors + report.timeouts;
  const mb = (bytes: number) => `${Math.round(bytes / MB)} MB`;

  const checks: Array<[string, boolean]> = [
    failed === null ? [aborted ?? 'no report', false] : [`every request answered 200 (${failed} failed)`, failed === 0],
    [`peak RSS ${mb(peak.rss)} <= ${mb(maxRss)}`, peak.rss <= maxRss],
    [`RSS growth from warm-up to end of load ${mb(end.rss - afterWarmup.rss)} <= ${mb(maxGrowth)}`, end.rss - afterWarmup.rss <= maxGrowth],
    [`DNS cache peak ${peakCache} <= ${limits.entries} entries`, peakCache <= limits.entries],
    [`DNS cache peak ${mb(peakCacheBytes)} <= ${mb(limits.bytes)} (estimated)`, peakCacheBytes <= limits.bytes],
    ['V8 runs with a bounded heap (--max-old-space-size, --heap-growing-percent), as the service does in production (Dockerfile, npm start)',
      ['--max-old-space-size', '--heap-growing-percent'].every((flag) => process.execArgv.some((f) => f.startsWith(flag)))],
    [`DNS queries in flight peak ${peakInFlight} <= cap ${RESOLVER_DEFAULTS.maxInFlight}`, peakInFlight <= RESOLVER_DEFAULTS.maxInFlight],
  ];

  const lines = [
    `soak: ${durationS} s, ${options.connections} connections, one request in ${options['hostile-every']} for a hostile domain (0: none), loopback only`,
    ...(report === null
      ? []
      : [
          `requests: ${report.requests} (${Math.round(report.requests / durationS)}/s), failed: ${failed} (non-2xx ${report.non2xx}, errors ${report.errors}, timeouts ${report.timeouts})`,
          `latency: p50 ${report.p50_ms} ms, p99 ${report.p99_ms} ms, max ${report.max_ms} ms`,
          `distinct: ${report.distinct_domains} domains, ${report.distinct_ips} IPs (counted up to 200,000 each)`,
        ]),
    `RSS: boot ${mb(rssAtBoot)}, after ${warmupS} s warm-up ${mb(afterWarmup.rss)}, peak ${mb(peak.rss)} at ${Math.round(peak.t)} s, end of load ${mb(end.rss)}, idle after ${mb(idle.rss)}`,
    `heap used: after warm-up ${mb(afterWarmup.heap)}, end of load ${mb(end.heap)}, idle after ${mb(idle.heap)}${live === null ? '' : `, live after a full GC ${mb(live)}`}; heap reserved: peak ${mb(Math.max(...samples.map((s) => s.heapTotal)))}, end of load ${mb(end.heapTotal)}; buffers outside the heap: peak ${mb(Math.max(...samples.map((s) => s.external)))}, end of load ${mb(end.external)}`,
    `evaluation log queue: peak ${Math.max(...samples.map((s) => s.logQueued))} of ${LOG_DEFAULTS.maxEntries} entries, peak ${mb(Math.max(...samples.map((s) => s.logBytes)))} of ${mb(LOG_DEFAULTS.maxBytes)} (estimated); written ${log.written}, dropped ${log.dropped}, failed ${log.failed}`,
    `history in memory: end ${end.history} identifiers, peak ${Math.max(...samples.map((s) => s.history))} of ${SQLITE_HISTORY_DEFAULTS.maxEntries}; peak ${mb(Math.max(...samples.map((s) => s.historyBytes)))} of ${mb(SQLITE_HISTORY_DEFAULTS.maxBytes)} (estimated); events refused ${history?.refused ?? 0}`,
    `DNS cache: end ${end.cache} entries, peak ${peakCache} of ${limits.entries}; peak ${mb(peakCacheBytes)} of ${mb(limits.bytes)} (estimated); queries in flight peak ${peakInFlight} of ${RESOLVER_DEFAULTS.maxInFlight}`,
    ...checks.map(([what, ok]) => `${ok ? 'ok  ' : 'FAIL'} ${what}`),
  ];
  console.log(lines.join('\n'));
  return checks.every(([, ok]) => ok) ? 0 : 1;
}

if (options.role === 'load') {
  await loadRole();
} else {
  process.exitCode = await serviceRole();
}
