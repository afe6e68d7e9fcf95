/**
 * E-mail intelligence micro-benchmark: `npx tsx bench/email.ts`.
 * Talks only to its own DNS server on 127.0.0.1 (bench/dns-server-process.ts), never to the
 * machine's resolver. Prints: the cost of an inspection whose domain is cached; 10,000 distinct
 * domains resolved with 1–5 ms of server latency at 20 and 200 concurrent inspections
 * (throughput, p99, event-loop delay p99); the memory of the DNS cache at its bounds, with typical
 * answers and with hostile ones (some 3,000 MX records of ~245-character names each, 64 KB over
 * TCP), beside the cache's own estimate (which must not be lower: the exit code is 1 if it is);
 * the memory of an inspector's caches filled with hostile answers, and the event-loop delay while
 * they arrive.
 */
import './temp-root.js';
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.js';
import { createResolver, RESOLVER_DEFAULTS, type Resolver } from '../src/dns/resolver.js';
import { parseEmail, type ParsedEmail } from '../src/email/address.js';
import { createEmailInspector } from '../src/email/index.js';
import type { Zone } from '../test/support/dns-server.js';

const DISTINCT = 10_000;
const CACHED_ITERATIONS = 200_000;
const CACHE_FILL = RESOLVER_DEFAULTS.cacheEntries + 2_000;
/** Hostile answers enough to overflow the byte bound (about 6 KB each as estimated). */
const HOSTILE_FILL = 4_000;

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const domain = (i: number): string => `d${i}.bench.test`;
const hostile = (i: number): string => `h${i}.hostile.bench.test`;
const zone: Zone = { '*.hostile.bench.test': { hugeMx: true } };
for (let i = 0; i < CACHE_FILL; i += 1) {
  zone[domain(i)] = {
    MX: [
      { exchange: `mx1.${domain(i)}`, priority: 10 },
      { exchange: `mx2.${domain(i)}`, priority: 20 },
    ],
  };
}

function email(address: string): ParsedEmail {
  const parsed = parseEmail(address);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

/** Heap in use after full collections (weak maps and what they free can take more than one). */
function settledHeap(): number {
  for (let i = 0; i < 3; i += 1) gc();
  return process.memoryUsage().heapUsed;
}

/** Look-ups of `count` names, `concurrency` at a time; returns how many failed, by reason. */
async function fill(resolver: Resolver, name: (i: number) => string, count: number, concurrency: number): Promise<Record<string, number>> {
  const failed: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const result = await resolver.lookup(name(next++), 'MX');
        if (result.kind === 'failure') failed[result.reason] = (failed[result.reason] ?? 0) + 1;
      }
    }),
  );
  return failed;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  // The server is TypeScript too: the child loads tsx's hooks.
  const server = fork(new URL('./dns-server-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
  server.send({ zone, latencyMinMs: 1, latencyMaxMs: 5 });
  const { port } = await new Promise<{ port: number }>((resolve) => server.once('message', (m) => resolve(m as { port: number })));
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-email-'));
  const config = loadConfig({ DATA_DIR: dataDir, DNS_SERVERS: `127.0.0.1:${port}`, DNS_TIMEOUT_MS: '1500', LOG_LEVEL: 'silent' });
  const logger = pino({ level: 'silent' });
  const signal = new AbortController().signal;

  console.log(`node ${process.version}, DNS server 127.0.0.1:${port} (child process, 1–5 ms latency)\n`);

  // 1. An inspection whose domain is in the DNS cache: lists, typo, role, canonical and a cache hit.
  {
    const inspector = await createEmailInspector({ config, logger });
    const cached = email('Jane.Doe+news@d0.bench.test');
    await inspector.inspect(cached, signal);
    for (let i = 0; i < 10_000; i += 1) await inspector.inspect(cached, signal); // warm-up
    const start = performance.now();
    for (let i = 0; i < CACHED_ITERATIONS; i += 1) await inspector.inspect(cached, signal);
    const ms = performance.now() - start;
    console.log('cached inspection, through inspect() (an awaited promise)');
    console.log(`  ${Math.round((CACHED_ITERATIONS / ms) * 1000).toLocaleString('en')} ops/s, ${((ms * 1000) / CACHED_ITERATIONS).toFixed(2)} µs/op`);
    // What the request path calls first: the answer from the caches, synchronously.
    for (let i = 0; i < 10_000; i += 1) inspector.inspectCached(cached);
    const syncStart = performance.now();
    for (let i = 0; i < CACHED_ITERATIONS; i += 1) inspector.inspectCached(cached);
    const syncMs = performance.now() - syncStart;
    console.log('cached inspection, through inspectCached() (the request path)');
    console.log(`  ${Math.round((CACHED_ITERATIONS / syncMs) * 1000).toLocaleString('en')} ops/s, ${((syncMs * 1000) / CACHED_ITERATIONS).toFixed(2)} µs/op`);
    await inspector.close();
  }

  // 2. 10,000 distinct domains, none cached, at two levels of concurrency.
  for (const concurrency of [20, 200]) {
    const inspector = await createEmailInspector({ config, logger });
    const offset = concurrency === 20 ? 0 : DISTINCT; // fresh names for each run
    const addresses = Array.from({ length: DISTINCT }, (_, i) => email(`user@${domain((offset + i) % CACHE_FILL)}`));
    const durations: number[] = [];
    let notDeliverable = 0;
    let next = 0;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < addresses.length) {
          const address = addresses[next++]!;
          const t = performance.now();
          // One signal per inspection, as the request path gives each evaluation its own.
          const report = await inspector.inspect(address, new AbortController().signal);
          durations.push(performance.now() - t);
          if (report.facts.deliverability !== 'deliverable') notDeliverable += 1;
        }
      }),
    );
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    loop.disable();
    durations.sort((a, b) => a - b);
    console.log(`\n${DISTINCT.toLocaleString('en')} distinct domains, ${concurrency} concurrent, uncached`);
    console.log(`  ${Math.round((DISTINCT / ms) * 1000).toLocaleString('en')} lookups/s (${(ms / 1000).toFixed(2)} s), client CPU ${Math.round((used.user + used.system) / DISTINCT)} µs/lookup, not deliverable: ${notDeliverable}`);
    console.log(`  latency p50 ${percentile(durations, 50).toFixed(2)} ms, p99 ${percentile(durations, 99).toFixed(2)} ms, max ${durations.at(-1)!.toFixed(2)} ms`);
    console.log(`  event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(2)} ms, max ${(loop.max / 1e6).toFixed(2)} ms`);
    await inspector.close();
  }

  // 3. Memory of the DNS cache filled past its bounds: heap with the filled resolver alive minus
  // heap once it is garbage, beside what the cache estimates it holds.
  for (const [label, name, count, concurrency] of [
    ['two MX records each', domain, CACHE_FILL, 200],
    ['hostile answers, 10 of ~3,000 MX records kept each', hostile, HOSTILE_FILL, 10],
  ] as const) {
    let resolver: Resolver | null = createResolver({ servers: config.dnsServers, timeoutMs: 1500 });
    const failed = await fill(resolver, name, count, concurrency);
    const { cacheSize: size, cacheBytes: estimated } = resolver;
    const filled = settledHeap();
    resolver = null;
    const bytes = filled - settledHeap();
    console.log(`\nDNS cache, ${label}: ${size.toLocaleString('en')} entries after ${count.toLocaleString('en')} look-ups, failed ${JSON.stringify(failed)} (bounds ${RESOLVER_DEFAULTS.cacheEntries.toLocaleString('en')} entries, ${mib(RESOLVER_DEFAULTS.cacheBytes)})`);
    console.log(`  heap ${mib(bytes)}, ${Math.round(bytes / size)} bytes/entry measured; estimated ${mib(estimated)}, ${Math.round(estimated / size)} bytes/entry`);
    if (estimated < bytes) {
      console.log('  FAIL: the estimate is below the heap measured, so the byte bound does not hold');
      process.exitCode = 1;
    }
  }

  // 4. A whole inspector (DNS cache, per-domain memo, what deliverability derives) filled with
  // hostile answers: the heap its caches keep, and the event-loop delay while the answers arrive.
  {
    const inspector = await createEmailInspector({ config, logger });
    await inspector.inspect(email('user@warm-up.hostile.bench.test'), new AbortController().signal);
    const before = settledHeap();
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    let next = 0;
    let unknown = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < HOSTILE_FILL) {
          const report = await inspector.inspect(email(`user@${hostile(HOSTILE_FILL + next++)}`), new AbortController().signal);
          if (report.facts.deliverability === 'unknown') unknown += 1;
        }
      }),
    );
    loop.disable();
    const bytes = settledHeap() - before;
    console.log(`\ninspector after ${HOSTILE_FILL.toLocaleString('en')} hostile domains (${unknown} unknown; bounds: DNS cache and domain memo ${mib(RESOLVER_DEFAULTS.cacheBytes)} each, estimated)`);
    console.log(`  heap kept by its caches ${mib(bytes)}; event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(2)} ms, max ${(loop.max / 1e6).toFixed(2)} ms`);
    await inspector.close();
  }

  server.send('close');
  await rm(dataDir, { recursive: true, force: true });
}

await main();
