/**
 * `npx tsx bench/rounds.ts` (after `npm run build`): does the service slow down as it runs? The
 * built service with `npm start`'s flags (SQLite), driven as `npm run bench -- --warm-only` drives
 * it (one person repeated, then a new person every request, round after round), printing per round
 * the CPU µs per request of each thread (main, the SQLite writer), the bytes the writer thread wrote
 * (WAL frames and checkpoints), the heap in use and the store's file sizes. CPU per request, not
 * req/s, is the figure to read on a shared machine; it counts what the round left the writer thread
 * (read once the service is idle again, and how long that took printed: bench/settle.ts).
 *
 *   npx tsx bench/rounds.ts --rounds 4 --seconds 5
 *   npx tsx bench/rounds.ts --prof        # also a CPU profile per thread (`node --cpu-prof`)
 *   npx tsx bench/rounds.ts --dist bench/tmp/before,dist --mix new   # two builds, alternately
 *   npx tsx bench/rounds.ts --mix crowd   # a new person every request, each from an address of their own
 *
 * `--mix`: any of `same` (one person repeated), `new` (a new person every request, from one
 * address), `crowd` and `both` (same and new), comma-separated (bench/mixes.ts). After the first
 * round each mix's answer is printed (state, rules fired), from three more requests of it to the
 * first service: the one-address mixes answer `review` once memory holds the address's velocity;
 * the crowd should not.
 *
 * Each run also prints the event-loop delay (p99, max) and the stalls: turns where a 5 ms timer
 * fired more than 30 ms late (bench/runtime-probe.mjs); with --prof, the profile's samples within
 * every stall are summed apart ("all stalls"): what held the loop.
 */
import { keptTmpdir } from './temp-root.js';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { generateKey } from '../src/keys/key.js';
import { writeDataSet } from './data-set.js';
import { envPairs } from './env-pairs.js';
import { mixBody, parseMixes, type Mix } from './mixes.js';
import { cpuTicksOf, settled, SETTLE_FLOOR_MS } from './settle.js';
import { startFlags } from './start-flags.js';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    prof: { type: 'boolean', default: false },
    /** Build directories, comma-separated: each its own service, run alternately (before/after in one harness). */
    dist: { type: 'string', default: 'dist' },
    mix: { type: 'string', default: 'both' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const KEY = generateKey();
const DOMAIN = 'mail-bench.example';
/**
 * `npm start`'s Node flags, from the package.json beside the build (a build directory's own, so two
 * builds may differ in them too), or this checkout's when the build has none beside it.
 */
const flagsOf = (dist: string) => {
  const beside = join(dist, '..', 'package.json');
  return startFlags(existsSync(beside) ? beside : 'package.json');
};
/** Read before anything is started, as the flags below. */
const mixes = parseMixes(options.mix!);
/** Read before anything is started: a bad package.json stops the run with nothing left running. */
const FLAGS = new Map(options.dist!.split(',').map((dist) => [dist, flagsOf(dist)]));

const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number };
    s.close(() => resolve(port));
  });
});

/** User + system CPU seconds of each thread of a process (Linux /proc), by thread id. */
function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const ticks = cpuTicksOf(`/proc/${pid}/task/${tid}/stat`);
    if (ticks !== null) out.set(Number(tid), ticks / 100); // null: the thread ended
  }
  return out;
}

/**
 * Bytes each thread other than the main one passed to write(2)-like calls (Linux /proc `wchar`: not
 * what reached the disk), by thread id: the SQLite writer thread's WAL frames and checkpoints (the
 * main thread's socket writes are left out), read once the service is idle after the round: what
 * the round left the writer is the round's (bench/settle.ts).
 */
function threadWrites(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    if (Number(tid) === pid) continue;
    try {
      out.set(Number(tid), Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/io`, 'utf8'))![1]));
    } catch {
      // the thread ended
    }
  }
  return out;
}

const root = mkdtempSync(join(tmpdir(), 'risk-rounds-'));
// Profiles outlive the run (they are read again by hand); the stores and data go with it.
const profiles = options.prof ? mkdtempSync(join(keptTmpdir, 'risk-rounds-profiles-')) : root;
const dataDir = join(root, 'data');
mkdirSync(dataDir);
writeDataSet(dataDir);
const dnsProcess = fork(new URL('./dns-server-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
dnsProcess.send({ zone: { [DOMAIN]: { MX: [{ exchange: `mx1.${DOMAIN}`, priority: 10 }] } }, latencyMinMs: 1, latencyMaxMs: 5 });
const dns = await new Promise<{ port: number }>((resolve) => dnsProcess.once('message', (m) => resolve(m as { port: number })));
const extraEnv = envPairs(options.env!);

interface Runtime { rss_bytes: number; heap_used_bytes?: number; event_loop_delay_p99_ms?: number; event_loop_delay_max_ms?: number; stalls?: Array<[number, number]> }
interface Target { dist: string; port: number; store: string; child: ChildProcess; spans: Span[]; stalls: Span[] }
interface Span { label: string; from: number; to: number }

/** One service from a build directory (`dist`, or an older build copied aside: before/after in one run). */
async function startTarget(dist: string, index: number): Promise<Target> {
  const port = await freePort();
  const store = join(root, `store-${index}`);
  mkdirSync(store);
  const child = spawn(process.execPath, [...FLAGS.get(dist)!, ...(options.prof ? ['--cpu-prof', `--cpu-prof-dir=${profiles}/prof-${index}`] : []), '--import', './bench/runtime-probe.mjs', join(dist, 'server.js')], {
    env: {
      PATH: process.env.PATH!, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: KEY,
      DATA_DIR: dataDir, RULES_DIR: 'rules', DNS_SERVERS: `127.0.0.1:${dns.port}`, RATE_LIMIT_MAX: '10000000', DATABASE_URL: `sqlite:${store}/risk.sqlite`,
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let ready = false;
  for (let i = 0; i < 400 && !ready && child.exitCode === null; i++) {
    ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (!ready) await new Promise((r) => setTimeout(r, 50));
  }
  if (!ready) {
    child.kill('SIGTERM');
    dnsProcess.kill('SIGTERM');
    throw new Error(`the service from ${dist} did not become ready`);
  }
  return { dist, port, store, child, spans: [], stalls: [] };
}
const ask = (target: Target, message: 'runtime' | 'reset') => new Promise<Runtime>((resolve) => {
  target.child.once('message', (m) => resolve(m as Runtime));
  target.child.send(message);
});
const targets: Target[] = [];
for (const [i, dist] of options.dist!.split(',').entries()) targets.push(await startTarget(dist, i));
/** What the mix is answered now: three requests of it (people past the run's), their states and rules fired. */
async function answers(target: Target, mix: Mix): Promise<string> {
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`http://127.0.0.1:${target.port}/v1/risk/evaluate`, {
      method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: mixBody(mix, 9_000_000 + i, DOMAIN),
    });
    const body = await response.json() as { score?: { state: string; details: Array<{ rule_id: string }> } };
    seen.push(body.score === undefined ? `HTTP ${response.status}` : `${body.score.state} [${body.score.details.map((d) => d.rule_id).join(', ')}]`);
  }
  return seen.join('; ');
}
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
/** Each target's next person: both see the same sequence of people. */
const people = targets.map(() => 1_000);
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
try {
  for (let round = 1; round <= Number(options.rounds); round += 1) {
    for (const mix of mixes) {
      for (const [t, target] of targets.entries()) {
        const pid = target.child.pid!;
        await ask(target, 'reset');
        const before = threadCpu(pid);
        const writesBefore = threadWrites(pid);
        const from = nowUs();
        const result = await autocannon({
          url: `http://127.0.0.1:${target.port}/v1/risk/evaluate`, method: 'POST', connections: 50, duration: Number(options.seconds),
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          requests: [{ setupRequest: (r) => ({ ...r, body: mixBody(mix, (people[t]! += 1), DOMAIN) }) }],
        });
        const label = `round ${round} ${mix}`;
        target.spans.push({ label, from, to: nowUs() });
        // The event loop's figures are the round's own (asked before the service goes idle).
        const r = await ask(target, 'runtime');
        // What the round left the writer thread is the round's: read once the service is idle again.
        const settleMs = await settled(pid);
        const after = threadCpu(pid);
        const writesAfter = threadWrites(pid);
        const n = result.requests.total;
        const us = (tid: number) => Math.round((((after.get(tid) ?? 0) - (before.get(tid) ?? 0)) * 1e6) / n);
        const threads = [...after.keys()].map((tid) => ({ tid, us: us(tid) })).sort((a, b) => b.us - a.us);
        const main = us(pid);
        const total = threads.reduce((s, x) => s + x.us, 0);
        const others = threads.filter((x) => x.tid !== pid).slice(0, 2).map((x) => x.us);
        // The writer: the busiest thread but the main one (a data-file worker is idle after start-up).
        const writer = threads.find((x) => x.tid !== pid)?.tid;
        const written = writer !== undefined && writesAfter.has(writer) ? writesAfter.get(writer)! - (writesBefore.get(writer) ?? 0) : null;
        for (const [a, b] of r.stalls ?? []) target.stalls.push({ label: `${label} stall`, from: a, to: b });
        const stallMs = (r.stalls ?? []).map(([a, b]) => Math.round((b - a) / 1000));
        console.log(`${targets.length > 1 ? `[${target.dist}] ` : ''}${label}: ${Math.round(n / result.duration)} req/s, p99 ${result.latency.p99} ms (mean ${result.latency.mean}); ` +
          `loop delay p99 ${r.event_loop_delay_p99_ms} max ${r.event_loop_delay_max_ms} ms, ${stallMs.length} stalls > 30 ms (longest ${Math.max(0, ...stallMs)}); CPU µs/req total ${total}, main ${main}, next threads ${others.join(', ')} (idle again after ${settleMs} ms, ${SETTLE_FLOOR_MS} of them to tell); ` +
          `rss ${mb(r.rss_bytes)} MB heap ${r.heap_used_bytes === undefined ? '?' : mb(r.heap_used_bytes)} MB; written ${written === null ? '?' : `${(written / n / 1024).toFixed(1)} KiB/req`}; db ${mb(size(`${target.store}/risk.sqlite`))} MB wal ${mb(size(`${target.store}/risk.sqlite-wal`))} MB`);
        if (round === 1 && t === 0) console.log(`  answered now (${mix}): ${await answers(target, mix)}`);
      }
    }
  }
} finally {
  for (const target of targets) {
    await new Promise<void>((resolve) => {
      target.child.once('exit', () => resolve());
      target.child.kill('SIGTERM');
    });
  }
  dnsProcess.kill('SIGTERM');
  // The stores (hundreds of MB after a few rounds) go; the profiles stay.
  for (const target of targets) rmSync(target.store, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
  if (options.prof) {
    for (const [i, target] of targets.entries()) {
      console.log(`\n[${target.dist}] profiles in ${profiles}/prof-${i}`);
      for (const file of readdirSync(`${profiles}/prof-${i}`)) {
        summarise(join(profiles, `prof-${i}`, file), target.spans);
        // Every stall's span together: what ran while the loop was stuck.
        const stalls = target.stalls.map((s) => ({ ...s, label: 'all stalls' }));
        if (stalls.length > 0) summarise(join(profiles, `prof-${i}`, file), stalls, true, 15);
        // And the five longest alone.
        const longest = [...target.stalls].sort((a, b) => b.to - b.from - (a.to - a.from)).slice(0, 5).sort((a, b) => a.from - b.from);
        for (const s of longest) summarise(join(profiles, `prof-${i}`, file), [{ ...s, label: `${s.label} ${Math.round((s.to - s.from) / 1000)} ms` }], true, 6);
      }
    }
  }
}

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }

/**
 * Self time by function within each span: an early round against a late one, from one profile.
 * `merged`: the spans summed as one (the stalls), with the inclusive time of the service's own
 * functions too (a sample counts for every function of dist/ on its stack): what held the loop.
 */
function summarise(file: string, spans: Span[], merged = false, top = 8) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const nameOf = new Map(profile.nodes.map((n) => [n.id, `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(dist|before|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const own = new Map(profile.nodes.map((n) => [n.id, /\/(dist|before)\//.test(n.callFrame.url)]));
  if (!merged) console.log(`\n${file}`);
  const groups = merged ? [spans] : spans.map((span) => [span]);
  for (const group of groups) {
    const counts = new Map<string, number>();
    const inclusive = new Map<string, number>();
    let t = profile.startTime;
    let total = 0;
    let g = 0;
    profile.samples.forEach((id, i) => {
      t += profile.timeDeltas[i]!;
      while (g < group.length && t > group[g]!.to) g += 1;
      if (g >= group.length || t < group[g]!.from) return;
      total += 1;
      const name = nameOf.get(id)!;
      counts.set(name, (counts.get(name) ?? 0) + 1);
      if (!merged) return;
      const seen = new Set<string>();
      for (let n: number | undefined = id; n !== undefined; n = parentOf.get(n)) {
        if (!own.get(n)) continue;
        const f = nameOf.get(n)!;
        if (!seen.has(f)) inclusive.set(f, (inclusive.get(f) ?? 0) + 1);
        seen.add(f);
      }
    });
    if (total === 0) continue;
    const share = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([f, x]) => `${((x / total) * 100).toFixed(1)}% ${f}`);
    console.log(`  ${group[0]!.label}${merged ? ` (${group.length})` : ''} (${total} samples): ${share(counts).join(' | ')}`);
    if (merged) console.log(`    inclusive, the service's functions: ${share(inclusive).join(' | ')}`);
  }
}
