/**
 * `npx tsx bench/rounds.ts` (after `npm run build`): does the service slow down as it runs? The
 * built service with `npm start`'s flags (SQLite), driven as `npm run bench -- --warm-only` drives
 * it (one person repeated, then a new person every request, round after round), printing per round
 * the CPU µs per request of each thread (main, the SQLite writer), the heap in use and the store's
 * file sizes. CPU per request, not req/s, is the figure to read on a shared machine.
 *
 *   npx tsx bench/rounds.ts --rounds 4 --seconds 5
 *   npx tsx bench/rounds.ts --prof        # also a CPU profile per thread (`node --cpu-prof`)
 */
import { fork, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { generateKey } from '../src/keys/key.js';
import { writeDataSet } from './data-set.js';
import { personBody } from './mixes.js';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    prof: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const KEY = generateKey();
const DOMAIN = 'mail-bench.example';
const START_FLAGS = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ').filter((w) => w.startsWith('--'));

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
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended
    }
  }
  return out;
}

const root = mkdtempSync(join(tmpdir(), 'risk-rounds-'));
const dataDir = join(root, 'data');
mkdirSync(dataDir);
writeDataSet(dataDir);
const dnsProcess = fork(new URL('./dns-server-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
dnsProcess.send({ zone: { [DOMAIN]: { MX: [{ exchange: `mx1.${DOMAIN}`, priority: 10 }] } }, latencyMinMs: 1, latencyMaxMs: 5 });
const dns = await new Promise<{ port: number }>((resolve) => dnsProcess.once('message', (m) => resolve(m as { port: number })));
const port = await freePort();
const store = join(root, 'store');
mkdirSync(store);
const extraEnv = Object.fromEntries(options.env!.map((kv) => kv.split('=') as [string, string]));
const child = spawn(process.execPath, [...START_FLAGS, ...(options.prof ? ['--cpu-prof', `--cpu-prof-dir=${root}/prof`] : []), '--import', './bench/runtime-probe.mjs', 'dist/server.js'], {
  env: {
    PATH: process.env.PATH!, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: KEY,
    DATA_DIR: dataDir, RULES_DIR: 'rules', DNS_SERVERS: `127.0.0.1:${dns.port}`, RATE_LIMIT_MAX: '10000000', DATABASE_URL: `sqlite:${store}/risk.sqlite`,
    ...extraEnv,
  },
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
});
const runtime = () => new Promise<{ rss_bytes: number; heap_used_bytes?: number }>((resolve) => {
  child.once('message', (m) => resolve(m as { rss_bytes: number }));
  child.send('runtime');
});
for (let i = 0; i < 400; i++) {
  if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) break;
  await new Promise((r) => setTimeout(r, 50));
}
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
let person = 1_000;
/** Each run's span on the monotonic clock (µs), which a .cpuprofile's timestamps use too. */
const spans: Array<{ label: string; from: number; to: number }> = [];
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
try {
  for (let round = 1; round <= Number(options.rounds); round += 1) {
    for (const mix of ['same', 'new'] as const) {
      const before = threadCpu(child.pid!);
      const from = nowUs();
      const result = await autocannon({
        url: `http://127.0.0.1:${port}/v1/risk/evaluate`, method: 'POST', connections: 50, duration: Number(options.seconds),
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        requests: [{ setupRequest: (r) => ({ ...r, body: personBody(mix === 'same' ? 7 : (person += 1), DOMAIN) }) }],
      });
      const after = threadCpu(child.pid!);
      spans.push({ label: `round ${round} ${mix}`, from, to: nowUs() });
      const n = result.requests.total;
      const us = (tid: number) => Math.round((((after.get(tid) ?? 0) - (before.get(tid) ?? 0)) * 1e6) / n);
      const threads = [...after.keys()].map((tid) => ({ tid, us: us(tid) })).sort((a, b) => b.us - a.us);
      const main = us(child.pid!);
      const total = threads.reduce((s, t) => s + t.us, 0);
      const others = threads.filter((t) => t.tid !== child.pid).slice(0, 2).map((t) => t.us);
      const r = await runtime();
      console.log(`round ${round} ${mix}: ${Math.round(n / result.duration)} req/s, p99 ${result.latency.p99} ms; CPU µs/req total ${total}, main ${main}, next threads ${others.join(', ')}; ` +
        `rss ${mb(r.rss_bytes)} MB heap ${r.heap_used_bytes === undefined ? '?' : mb(r.heap_used_bytes)} MB; db ${mb(size(`${store}/risk.sqlite`))} MB wal ${mb(size(`${store}/risk.sqlite-wal`))} MB`);
    }
  }
} finally {
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  dnsProcess.kill('SIGTERM');
  if (options.prof) {
    console.log(`profiles in ${root}/prof`);
    for (const file of readdirSync(`${root}/prof`)) summarise(join(root, 'prof', file), spans);
  }
}

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }

/** Self time by function within each span: an early round against a late one, from one profile. */
function summarise(file: string, spans: Array<{ label: string; from: number; to: number }>) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const nameOf = new Map(profile.nodes.map((n) => [n.id, `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`]));
  console.log(`\n${file}`);
  for (const span of spans) {
    const counts = new Map<string, number>();
    let t = profile.startTime;
    let total = 0;
    profile.samples.forEach((id, i) => {
      t += profile.timeDeltas[i]!;
      if (t < span.from || t > span.to) return;
      total += 1;
      const name = nameOf.get(id)!;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    });
    if (total === 0) continue;
    const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([f, x]) => `${((x / total) * 100).toFixed(1)}% ${f}`);
    console.log(`  ${span.label} (${total} samples): ${top.join(' | ')}`);
  }
}
