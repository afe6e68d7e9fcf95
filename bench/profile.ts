/**
 * `npx tsx bench/profile.ts`: a CPU profile of the built service (`node --cpu-prof`, main thread)
 * under autocannon load, for the mixes of `npm run bench` (one person repeated; a new person
 * every request: new e-mail, user and device, one IP; with `--mix crowd`, a new person from an
 * address of their own each request), and the functions that took the most self
 * time. What guided the history/log work of issue 24; everything on 127.0.0.1, every run bounded.
 * The service runs with `npm start`'s Node flags (package.json) unless `--flags` names others
 * (`--flags=` for none): the heap's bound and growth change how much the garbage collector works.
 * Its CPU by thread is read with the profiler on: V8's helper threads then read 2–11× what they
 * do without it (the profiler's own work); `bench/rounds.ts` without `--prof` has the plain figures.
 *
 *   npm run build && npx tsx bench/profile.ts                   # both mixes, 10 s each, SQLite
 *   npx tsx bench/profile.ts --mix new --seconds 5 --flags=--optimize-for-size
 *   npx tsx bench/profile.ts --mix crowd        # a new person every request, each from an address of their own
 *   npx tsx bench/profile.ts --postgres                         # on a loopback PostgreSQL
 *   npx tsx bench/profile.ts --postgres --statements            # and the statements it ran (pg_stat_statements)
 *   npx tsx bench/profile.ts --postgres --env RETENTION_DAYS=0   # the service's environment, changed (the log off)
 *   npx tsx bench/profile.ts --mix new --add-flags=--trace-gc --env LOG_LEVEL=silent --service-output   # and its collections
 */
import { keptTmpdir } from './temp-root.js';
import { fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { generateKey } from '../src/keys/key.js';
import { startPostgres } from '../test/support/postgres.js';
import { writeDataSet } from './data-set.js';
import { envPairs } from './env-pairs.js';
import { mixBody, parseMixes } from './mixes.js';
import { startFlags } from './start-flags.js';

const { values: options } = parseArgs({
  options: {
    mix: { type: 'string', default: 'both' },
    seconds: { type: 'string', default: '10' },
    flags: { type: 'string' },
    /** Appended to the flags (`npm start`'s, or those of --flags). */
    'add-flags': { type: 'string', default: '' },
    postgres: { type: 'boolean', default: false },
    statements: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    top: { type: 'string', default: '25' },
    /** The service's standard output on this one (its log, or what a V8 flag such as --trace-gc prints). */
    'service-output': { type: 'boolean', default: false },
  },
});
const MIXES = parseMixes(options.mix!);
const KEY = generateKey();
const DOMAIN = 'mail-bench.example';

const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number };
    s.close(() => resolve(port));
  });
});

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }

/** The monotonic clock in µs, as a profile's sample times are (bench/rounds.ts does the same). */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time by function and by area, over the samples taken during the load (`from`, `to`): the
 * start-up's loading of lists and data files, and the shutdown after, are left out, or they would
 * rank beside the request path.
 */
function summarise(file: string, top: number, from: number, to: number) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const hits = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i]!;
    if (at >= from && at <= to) hits.set(id, (hits.get(id) ?? 0) + 1);
  });
  let total = 0;
  for (const x of hits.values()) total += x;
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const n of profile.nodes) {
    const count = hits.get(n.id) ?? 0;
    if (count === 0) continue;
    const url = n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/');
    const name = `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + count);
    const area = n.callFrame.url === '' ? n.callFrame.functionName : url.startsWith('dist/') ? url.split('/').slice(0, 2).join('/') : url.startsWith('node_modules/') ? url.split('/').slice(0, 2).join('/') : url.startsWith('node:') ? url : 'other';
    byArea.set(area, (byArea.get(area) ?? 0) + count);
  }
  if (total === 0) {
    console.log('\nno sample in the load\'s span');
    return;
  }
  const pct = (x: number) => `${((x / total) * 100).toFixed(1)} %`;
  console.log(`\n${total} samples. By area (self time):`);
  for (const [a, x] of [...byArea].sort((p, q) => q[1] - p[1]).slice(0, 15)) console.log(`  ${pct(x).padStart(7)}  ${a}`);
  console.log('Top functions (self time):');
  for (const [f, x] of [...byFunction].sort((p, q) => q[1] - p[1]).slice(0, top)) console.log(`  ${pct(x).padStart(7)}  ${f}`);
}

const root = mkdtempSync(join(tmpdir(), 'risk-profile-'));
const dataDir = join(root, 'data');
mkdirSync(dataDir);
writeDataSet(dataDir);
const dnsProcess = fork(new URL('./dns-server-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
dnsProcess.send({ zone: { [DOMAIN]: { MX: [{ exchange: `mx1.${DOMAIN}`, priority: 10 }] } }, latencyMinMs: 1, latencyMaxMs: 5 });
const dns = await new Promise<{ port: number }>((resolve) => dnsProcess.once('message', (m) => resolve(m as { port: number })));
const postgres = options.postgres ? await startPostgres() : null;
if (postgres !== null && options.statements) {
  // pg_stat_statements is in the npm package's server (and Debian's): loaded at start, so a restart.
  const admin = new pg.Client(postgres.url());
  await admin.connect();
  await admin.query("alter system set shared_preload_libraries = 'pg_stat_statements'");
  await admin.query('alter system set pg_stat_statements.track_planning = on'); // else planning counts 0
  await admin.end();
  await postgres.stop();
  await postgres.start();
}

/** A process's CPU so far, in clock ticks (/proc/<pid>/stat: utime, stime; all its threads), and each thread's by its name. */
function processCpu(pid: number): { user: number; system: number; threads: Map<string, number> } {
  const ticks = (stat: string) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]), system: Number(fields[12]), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) };
  };
  const threads = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const t = ticks(readFileSync(`/proc/${pid}/task/${task}/stat`, 'latin1'));
      threads.set(t.name, (threads.get(t.name) ?? 0) + t.user + t.system);
    } catch {
      // the thread ended
    }
  }
  const all = ticks(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  return { user: all.user, system: all.system, threads };
}

/** The statements the run cost the server, per evaluation: calls, and time executing (ms). */
async function statements(url: string, evaluations: number) {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ calls: string; ms: number; plan: number; plans: string; rows: string; query: string }>(
      `select calls, total_exec_time + total_plan_time as ms, total_plan_time as plan, plans, rows, query from pg_stat_statements
       where dbid = (select oid from pg_database where datname = current_database()) order by 2 desc limit 15`);
    console.log(`\nStatements (pg_stat_statements), ${evaluations} evaluations:\n   calls/eval  µs/eval  of it planning  plans/call  rows/call  statement`);
    for (const r of rows) {
      const text = r.query.replace(/\s+/g, ' ').slice(0, 110);
      const calls = Math.max(1, Number(r.calls));
      console.log(`  ${(Number(r.calls) / evaluations).toFixed(3).padStart(10)} ${((r.ms * 1000) / evaluations).toFixed(0).padStart(8)} ${((r.plan * 1000) / evaluations).toFixed(0).padStart(15)} ${(Number(r.plans) / calls).toFixed(2).padStart(11)} ${(Number(r.rows) / calls).toFixed(1).padStart(10)}  ${text}`);
    }
  } finally {
    await client.end();
  }
}

try {
  for (const mix of MIXES) {
    const port = await freePort();
    const dir = mkdtempSync(join(root, `prof-${mix}-`));
    // The profiles outlive the run (they are read again by hand); the store goes with it.
    const profileDir = mkdtempSync(join(keptTmpdir, `risk-profile-${mix}-`));
    const database = postgres ? await postgres.createDatabase() : `sqlite:${dir}/risk.sqlite`;
    if (postgres !== null && options.statements) {
      const client = new pg.Client(database);
      await client.connect();
      await client.query('create extension if not exists pg_stat_statements');
      await client.end();
    }
    const flags = [...(options.flags === undefined ? startFlags() : options.flags.split(' ')), ...options['add-flags']!.split(' ')].filter(Boolean);
    const child = spawn(process.execPath, [...flags, '--cpu-prof', `--cpu-prof-dir=${profileDir}`, 'dist/server.js'], {
      env: {
        PATH: process.env.PATH!, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: KEY,
        DATA_DIR: dataDir, RULES_DIR: 'rules', DNS_SERVERS: `127.0.0.1:${dns.port}`, RATE_LIMIT_MAX: '10000000', DATABASE_URL: database,
        ...envPairs(options.env!),
      },
      stdio: ['ignore', options['service-output'] ? 'inherit' : 'ignore', 'inherit'],
    });
    for (let i = 0; i < 400; i++) {
      if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    let n = 0;
    const before = processCpu(child.pid!);
    const from = nowUs();
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/v1/risk/evaluate`, method: 'POST', connections: 50, duration: Number(options.seconds),
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      requests: [{ setupRequest: (r) => ({ ...r, body: mixBody(mix, (n += 1), DOMAIN) }) }],
    });
    const after = processCpu(child.pid!);
    const to = nowUs();
    const perRequest = (ticks: number) => Math.round((ticks * 10_000) / Math.max(1, result.requests.total)); // 100 ticks a second
    console.log(`\nservice CPU µs per request (all its threads, /proc): user ${perRequest(after.user - before.user)}, system ${perRequest(after.system - before.system)}`);
    const threads = [...after.threads].map(([name, t]) => [name, perRequest(t - (before.threads.get(name) ?? 0))] as const).filter(([, us]) => us > 0);
    console.log(`by thread (threads of one name summed): ${threads.sort((a, b) => b[1] - a[1]).map(([name, us]) => `${name} ${us}`).join(', ')}`);
    console.log(`== mix ${mix} (${options.postgres ? 'PostgreSQL' : 'SQLite'}; flags: ${flags.join(' ') || 'none'}${options.env!.length > 0 ? `; ${options.env!.join(' ')}` : ''}): ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`);
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    if (postgres !== null && options.statements) await statements(database, result.requests.total);
    const files = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(profileDir, f));
    // The main thread's profile is the largest (each worker thread's that ended is written beside it).
    files.sort((a, b) => readFileSync(b).length - readFileSync(a).length);
    console.log(`profiles: ${files.join(', ')}`);
    summarise(files[0]!, Number(options.top), from, to);
    // The writer thread's (SQLite): the one whose code is the writer's. Not the second largest:
    // the data files' worker (src/files), busy only at start, can write a larger profile.
    const writer = files.slice(1).find((f) => readFileSync(f, 'utf8').includes('sqlite-log-worker'));
    if (writer !== undefined) {
      console.log('\nThe SQLite writer thread:');
      summarise(writer, 12, from, to);
    } else {
      // Its thread is ended at shutdown before it writes one; `perf record` with --add-flags=--perf-basic-prof sees it.
      console.log('\n(no profile of the SQLite writer thread: its CPU is in the line "by thread" above)');
    }
  }
} finally {
  dnsProcess.kill('SIGTERM');
  await postgres?.close();
}
