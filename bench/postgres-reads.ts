/**
 * `npx tsx bench/postgres-reads.ts` (after `npm run build`): the PostgreSQL history step in one
 * process, built code, on a throwaway loopback PostgreSQL (test/support/postgres.ts): events of the
 * new-person mix (new e-mail, user and device; one IP address) or of one person repeated, `record()`
 * called with `--concurrency` reads outstanding (default 16, as many addresses would have; the
 * recorder lets one address have 4). Prints, per event: this process's CPU (all its threads; the
 * events' three HMACs included), the PostgreSQL server's CPU (its postmaster and backends, from
 * /proc), and events a second. On two cores the two CPUs add up to what an evaluation costs the
 * machine; the wall rate is what they leave. `--dist` names builds (copies of older builds beside
 * `dist/`) run alternately, each on a database of its own, so a before/after is one run.
 *
 *   npx tsx bench/postgres-reads.ts --dist var/before/dist,dist --mix new --events 5000 --rounds 3
 */
import './temp-root.js';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { startPostgres } from '../test/support/postgres.js';

const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    mix: { type: 'string', default: 'new' },
    events: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    'pg-options': { type: 'string', default: '' },
  },
});
const EVENTS = Number(options.events);
const CONCURRENCY = Number(options.concurrency);
const PLACE = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };
const TICK = 100; // clock ticks a second in /proc/<pid>/stat (USER_HZ)

/** CPU seconds of the throwaway server: its postmaster (the one listening on its port) and its children. */
function serverCpu(port: number): number {
  const stats = new Map<string, string[]>();
  let postmaster: string | undefined;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const close = stat.lastIndexOf(')');
      if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
      stats.set(pid, stat.slice(close + 2).split(' '));
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').includes(`-p ${port}`)) postmaster = pid;
    } catch {
      // gone between the listing and the read
    }
  }
  let ticks = 0;
  for (const [pid, fields] of stats) {
    if (pid === postmaster || fields[1] === postmaster) {
      // utime, stime, and the children's the process has waited for (the postmaster: ended backends).
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    }
  }
  return ticks / TICK;
}

interface Build {
  dist: string;
  history: { record(event: unknown): unknown; prune(): Promise<number>; close(): Promise<void>; stats(): Record<string, number> };
  pools: pg.Pool[];
  hash: (account: string, kind: string, value: string) => Buffer;
  historyEvent: (fields: Record<string, unknown>) => unknown;
  next: number;
}

const server = await startPostgres();
async function open(dist: string): Promise<Build> {
  const url = await server.createDatabase();
  const at = (file: string) => import(pathToFileURL(resolve(dist, file)).href);
  // Migrated by the build's own migrations: a build may change the schema (an index) as well as the code.
  const { openStore } = await at('store/index.js');
  const { parseDatabaseUrl } = await at('config/store-url.js');
  const database = parseDatabaseUrl(url);
  if ('error' in database) throw new Error(database.error);
  await (await openStore({ database, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true })).close();
  const { postgresHistory, historyStatementTimeoutMs } = await at('store/history-postgres.js');
  const { keyedHasher } = await at('history/identifiers.js');
  const { historyEvent } = await at('history/event.js');
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const recordPool = new pg.Pool({ connectionString: url, max: 10, statement_timeout: historyStatementTimeoutMs(200), ...(options['pg-options'] !== '' && { options: options['pg-options'] }) });
  const history = postgresHistory(pool, recordPool, { stepTimeoutMs: 200, historyDays: 30, now: Date.now });
  return { dist, history, pools: [pool], hash: keyedHasher(Buffer.alloc(32, 7)), historyEvent, next: 0 };
}

const builds: Build[] = [];
for (const dist of options.dist!.split(',')) builds.push(await open(dist));
const account = '00000000-0000-4000-8000-000000000001';
try {
  for (let round = 1; round <= Number(options.rounds); round++) {
    for (const b of builds) {
      const ip = b.hash(account, 'ip', '81.2.69.160');
      const event = () => {
        const i = options.mix === 'same' ? 0 : (b.next += 1);
        const user = b.hash(account, 'user', `u-${i}`);
        return b.historyEvent({
          account, at: Date.now(), ip, email: b.hash(account, 'email', `user${i}@mail-bench.example`),
          identity: user, device: b.hash(account, 'device', (i + 1).toString(16).padStart(64, '0')), user, place: PLACE,
        });
      };
      let failed = 0;
      let sent = 0;
      const worker = async () => {
        while (sent < EVENTS) {
          sent += 1;
          try {
            await b.history.record(event());
          } catch {
            failed += 1;
          }
        }
      };
      const cpu = process.cpuUsage();
      const server0 = serverCpu(server.port);
      const started = performance.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      await b.history.prune(); // the round's writes flushed: their cost is the round's
      const wall = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const serverUs = ((serverCpu(server.port) - server0) * 1e6) / EVENTS;
      const ownUs = (used.user + used.system) / EVENTS;
      console.log(`[${b.dist}] ${options.mix} round ${round}: ${(EVENTS / wall).toFixed(0)} events/s; CPU µs/event: this process ${ownUs.toFixed(0)}, ` +
        `server ${serverUs.toFixed(0)}, both ${(ownUs + serverUs).toFixed(0)}${failed > 0 ? `; ${failed} failed` : ''}`);
    }
  }
} finally {
  for (const b of builds) {
    await b.history.close();
    for (const p of b.pools) await p.end();
  }
  await server.close();
}
