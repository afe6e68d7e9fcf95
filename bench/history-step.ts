/**
 * `npx tsx bench/history-step.ts` (after `npm run build`): the SQLite history step of the
 * new-person mix in one process, built code, with the real writer thread: per event, the four
 * identifiers hashed (ip, e-mail, user, device; one shared address) and `record()`, as the
 * recorder does. Prints the main thread's CPU µs per event (process.threadCpuUsage), the longest
 * single step (the event-loop stall it makes), and the garbage collector's pauses (count, total,
 * longest). `--dist` names the build (a copy of an older build beside `dist/`, for before/after:
 * run one process per build, alternately; two builds in one process would share one heap).
 *
 *   node --max-old-space-size=224 --max-semi-space-size=8 --heap-growing-percent=100 --import tsx bench/history-step.ts --dist var/before --events 20000 --rounds 3
 */
import './temp-root.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { openStore } from '../src/store/index.js';
import { parseDatabaseUrl } from '../src/config/store-url.js';

const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    events: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    rate: { type: 'string', default: '2500' },
  },
});
const EVENTS = Number(options.events);
const RATE = Number(options.rate);
const PLACE = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };

interface Build {
  dist: string;
  dir: string;
  history: { record(event: unknown): unknown; close(): Promise<void>; stats(): Record<string, number> };
  hash: (account: string, kind: string, value: string) => Buffer;
  historyEvent: (fields: Record<string, unknown>) => unknown;
  next: number;
}

let gcPauses: number[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push(entry.duration);
}).observe({ entryTypes: ['gc'] });

async function open(dist: string): Promise<Build> {
  const dir = mkdtempSync(join(tmpdir(), 'risk-step-'));
  const url = `sqlite:${join(dir, 'risk.sqlite')}`;
  const database = parseDatabaseUrl(url);
  if ('error' in database) throw new Error(database.error);
  await (await openStore({ database, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true })).close(); // migrated
  const at = (file: string) => import(pathToFileURL(resolve(dist, file)).href);
  const { sqliteHistory } = await at('store/history-sqlite.js');
  const { openSqliteWriterThread } = await at('store/sqlite-log-writer.js');
  const { keyedHasher } = await at('history/identifiers.js');
  const { historyEvent } = await at('history/event.js');
  const thread = await openSqliteWriterThread(database, 1);
  const history = sqliteHistory({ path: (database as { path: string }).path, thread, onWriteError: (e: Error) => { throw e; }, historyDays: 30, now: Date.now });
  return { dist, dir, history, hash: keyedHasher(Buffer.alloc(32, 7)), historyEvent, next: 0 };
}

const builds: Build[] = [];
for (const dist of options.dist!.split(',')) builds.push(await open(dist));
const account = '00000000-0000-4000-8000-000000000001';
for (let round = 1; round <= Number(options.rounds); round++) {
  for (const b of builds) {
    gcPauses = [];
    let longest = 0;
    const cpu = process.threadCpuUsage();
    for (let n = 0; n < EVENTS; n++) {
      const i = (b.next += 1);
      const started = performance.now();
      const user = b.hash(account, 'user', `u-${i}`);
      const event = b.historyEvent({
        account, at: Date.now(), ip: b.hash(account, 'ip', '81.2.69.160'), email: b.hash(account, 'email', `user${i}@mail-bench.example`),
        identity: user, device: b.hash(account, 'device', (i + 1).toString(16).padStart(64, '0')), user, place: PLACE,
      });
      b.history.record(event);
      longest = Math.max(longest, performance.now() - started);
      // As between requests: the write-back's timer and replies run (50 evaluations a turn, as 50
      // connections make, at about --rate a second: the writer thread keeps up with that).
      if (n % 50 === 49) await new Promise((r) => setTimeout(r, 50_000 / RATE));
    }
    const used = process.threadCpuUsage(cpu);
    await new Promise((r) => setTimeout(r, 100));
    const gcTotal = gcPauses.reduce((s, d) => s + d, 0);
    const s = b.history.stats();
    console.log(`[${b.dist}] round ${round}: ${(((used.user + used.system) / EVENTS)).toFixed(1)} CPU µs/event (main thread), longest step ${longest.toFixed(1)} ms; ` +
      `GC ${gcPauses.length} pauses, ${gcTotal.toFixed(0)} ms, longest ${Math.max(0, ...gcPauses).toFixed(1)} ms; heap ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MB; held ${s.cached}, refused ${s.refused}`);
  }
}
for (const b of builds) {
  await b.history.close();
  rmSync(b.dir, { recursive: true, force: true });
}
