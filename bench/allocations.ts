/**
 * `npx tsx bench/allocations.ts` (after `npm run build`): what one evaluation allocates, and how much
 * of it lives long enough for the garbage collector to copy, in the built service with `npm start`'s
 * flags (SQLite), under the mixes of `npm run bench` (`--mix crowd` too). Bytes per request are a
 * property of the code, not of the machine: unlike CPU time and req/s they hardly move when other
 * jobs share the cores, so a change to the request path can be judged on a busy machine. Printed
 * per mix:
 *
 *  - allocated, copied within the young generation (survived one scavenge) and promoted to the old
 *    generation (survived two), bytes per request, from `--trace-gc-nvp` over the measured seconds;
 *  - scavenges and mark-compacts in those seconds, their count and summed pause (machine-dependent);
 *  - with `--sample`, where the bytes are allocated: V8's sampling heap profiler, counting objects
 *    the collector has already freed too, by function (self and inclusive), bytes per request;
 *    with `--survivors` (which implies `--sample`), only the objects no scavenge freed: where what is
 *    promoted comes from.
 *
 *   npx tsx bench/allocations.ts                        # both mixes, 4 s warm-up, 10 s measured
 *   npx tsx bench/allocations.ts --mix new --sample --dist var/before/dist,dist
 *   npx tsx bench/allocations.ts --mix crowd          # a new person from an address of their own each request
 *   npx tsx bench/allocations.ts --postgres --mix new   # the store on a loopback PostgreSQL (a database per service)
 *   npx tsx bench/allocations.ts --mix new --env HISTORY_DAYS=0   # the service's environment changed
 *
 * A scavenge's cost is mostly what it copies: an object that outlives one (a queued log record, an
 * identifier held by the history's memory) is copied once or twice, then marked by every
 * mark-compact until it dies.
 */
import './temp-root.js';
import { fork, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { generateKey } from '../src/keys/key.js';
import { freePort } from '../test/support/process.js';
import { startPostgres } from '../test/support/postgres.js';
import { writeDataSet } from './data-set.js';
import { envPairs } from './env-pairs.js';
import { mixBody, parseMixes, type Mix } from './mixes.js';
import { startFlags } from './start-flags.js';

const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    mix: { type: 'string', default: 'both' },
    warm: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '10' },
    sample: { type: 'boolean', default: false },
    survivors: { type: 'boolean', default: false },
    top: { type: 'string', default: '25' },
    postgres: { type: 'boolean', default: false },
    /** The service's environment changed, `K=V` (e.g. HISTORY_DAYS=0: the history off). */
    env: { type: 'string', multiple: true, default: [] },
  },
});
const extraEnv = envPairs(options.env!);
/** Checked before anything starts. */
const MIXES = parseMixes(options.mix!);
// --survivors narrows what --sample counts: alone it means both.
if (options.survivors) options.sample = true;
const KEY = generateKey();
const DOMAIN = 'mail-bench.example';
const START_FLAGS = startFlags();

const root = mkdtempSync(join(tmpdir(), 'risk-allocations-'));
mkdirSync(join(root, 'data'));
writeDataSet(join(root, 'data'));
const dnsProcess = fork(new URL('./dns-server-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
dnsProcess.send({ zone: { [DOMAIN]: { MX: [{ exchange: `mx1.${DOMAIN}`, priority: 10 }] } }, latencyMinMs: 1, latencyMaxMs: 5 });
const dns = await new Promise<{ port: number }>((resolve) => dnsProcess.once('message', (m) => resolve(m as { port: number })));
const postgres = options.postgres ? await startPostgres() : null;

interface GcLine { at: number; kind: string; fields: Record<string, string> }

/**
 * `--trace-gc-nvp` lines of the main isolate, with their time (ms since start): of the isolates
 * that report (the main thread's, the SQLite writer thread's, the files worker's), the one that
 * allocated the most.
 */
function gcLines(text: string): GcLine[] {
  const byIsolate = new Map<string, GcLine[]>();
  for (const line of text.split('\n')) {
    const m = /^\[\d+:(0x[0-9a-f]+)(?::\d+)?\]\s+(\d+) ms: (.*)$/.exec(line);
    if (m === null || !m[3]!.includes('gc=')) continue;
    const fields = Object.fromEntries(m[3]!.split(' ').filter((w) => w.includes('=')).map((w) => w.split('=', 2) as [string, string]));
    let lines = byIsolate.get(m[1]!);
    if (lines === undefined) byIsolate.set(m[1]!, (lines = []));
    lines.push({ at: Number(m[2]), kind: fields.gc === 's' ? 'scavenge' : 'mark-compact', fields });
  }
  const allocated = (lines: GcLine[]) => lines.reduce((s, l) => s + Number(l.fields.allocated ?? 0), 0);
  return [...byIsolate.values()].sort((a, b) => allocated(b) - allocated(a))[0] ?? [];
}

interface SampleNode { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: SampleNode[] }

/** Bytes per request by function, self and inclusive, from a sampling heap profile. */
function summarise(head: SampleNode, requests: number, top: number) {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const nameOf = (f: SampleNode['callFrame']) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  const walk = (node: SampleNode, stack: string[]) => {
    const name = nameOf(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + node.selfSize);
    const on = stack.includes(name) ? stack : [...stack, name];
    for (const f of on) inclusive.set(f, (inclusive.get(f) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, on);
  };
  walk(head, []);
  const show = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([f, bytes]) => `    ${String(Math.round(bytes / requests)).padStart(6)} B  ${f}`).join('\n');
  console.log(`  self:\n${show(self)}\n  inclusive:\n${show(inclusive)}`);
}

const MIX_NAMES: Record<Mix, string> = { same: 'one person repeated', new: 'a new person every request', crowd: 'a crowd (a new person from a new address)' };

async function measure(dist: string, mix: Mix) {
  const port = await freePort();
  const store = join(root, `store-${mix}-${dist.replace(/\W/g, '_')}`);
  mkdirSync(store);
  const trace = join(root, 'gc.txt');
  const heap = join(root, 'allocations.heapprofile');
  const out = openSync(trace, 'w');
  const database = postgres === null ? `sqlite:${store}/risk.sqlite` : await postgres.createDatabase();
  const child = spawn(process.execPath, [...START_FLAGS, '--trace-gc', '--trace-gc-nvp', ...(options.sample ? ['--import', './bench/heap-sampler.mjs'] : []), join(dist, 'server.js')], {
    env: {
      PATH: process.env.PATH!, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', API_KEYS: KEY, HEAP_PROFILE: heap, HEAP_SURVIVORS: options.survivors ? '1' : '0',
      DATA_DIR: join(root, 'data'), RULES_DIR: 'rules', DNS_SERVERS: `127.0.0.1:${dns.port}`, RATE_LIMIT_MAX: '10000000', DATABASE_URL: database,
      ...extraEnv,
    },
    stdio: ['ignore', out, 'inherit', ...(options.sample ? ['ipc' as const] : [])],
  });
  try {
    let ready = false;
    for (let i = 0; i < 400 && !ready && child.exitCode === null; i++) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
      if (!ready) await new Promise((r) => setTimeout(r, 50));
    }
    if (!ready) throw new Error(`the service from ${dist} did not become ready`);
    let person = 1_000;
    const load = (seconds: number) => autocannon({
      url: `http://127.0.0.1:${port}/v1/risk/evaluate`, method: 'POST', connections: 50, duration: seconds,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      requests: [{ setupRequest: (r) => ({ ...r, body: mixBody(mix, (person += 1), DOMAIN) }) }],
    });
    const ask = (message: string) => new Promise<void>((resolve) => {
      child.once('message', () => resolve());
      child.send(message);
    });
    await load(Number(options.warm));
    const from = performance.timeOrigin + performance.now();
    if (options.sample) await ask('start');
    const result = await load(Number(options.seconds));
    if (options.sample) await ask('stop');
    const to = performance.timeOrigin + performance.now();
    const n = result.requests.total;
    // The trace's times are ms since the child started; the measured window is its last `seconds`.
    const lines = gcLines(readFileSync(trace, 'utf8'));
    const end = lines.at(-1)?.at ?? 0;
    const window = lines.filter((l) => l.at > end - (to - from));
    const sum = (field: string, kind?: string) => window.filter((l) => kind === undefined || l.kind === kind).reduce((s, l) => s + Number(l.fields[field] ?? 0), 0);
    const count = (kind: string) => window.filter((l) => l.kind === kind).length;
    console.log(`[${dist}] ${MIX_NAMES[mix]}: ${Math.round(n / result.duration)} req/s; per request allocated ${Math.round(sum('allocated') / n)} B, ` +
      `copied in the young generation ${Math.round(sum('new_space_survived') / n)} B, promoted ${Math.round(sum('promoted') / n)} B; ` +
      `${count('scavenge')} scavenges (${Math.round(sum('pause', 'scavenge'))} ms paused), ${count('mark-compact')} mark-compacts (${Math.round(sum('pause', 'mark-compact'))} ms)`);
    if (options.sample) summarise((JSON.parse(readFileSync(heap, 'utf8')) as { head: SampleNode }).head, n, Number(options.top));
  } finally {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    closeSync(out);
    rmSync(store, { recursive: true, force: true });
  }
}

try {
  for (const mix of MIXES) for (const dist of options.dist!.split(',')) await measure(dist, mix);
} finally {
  dnsProcess.kill('SIGTERM');
  await postgres?.close();
  rmSync(root, { recursive: true, force: true });
}
