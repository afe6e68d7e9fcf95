/**
 * `node --expose-gc --import tsx bench/history-memory.ts [dist] [people]` (after `npm run build`):
 * the memory SQLite history's identifiers take, measured: `people` new people of the crowd (each
 * their own address, e-mail address, user and device: four identifiers) recorded with the bounds
 * out of the way, then the heap and typed arrays in use after a collection against before, per
 * identifier held, beside the store's own estimate (its `bytes`, on which its bounds act). `dist`:
 * the build (default dist; an older build's copy for before and after).
 *
 *   node --expose-gc --import tsx bench/history-memory.ts dist 25000
 */
import './temp-root.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { openStore } from '../src/store/index.js';
import { parseDatabaseUrl } from '../src/config/store-url.js';
const [dist = 'dist', peopleArg] = process.argv.slice(2);
const PEOPLE = Number(peopleArg ?? 20000);
const dir = mkdtempSync(join(tmpdir(), 'risk-mem-'));
const database = parseDatabaseUrl(`sqlite:${join(dir, 'risk.sqlite')}`);
if ('error' in database) throw new Error(database.error);
await (await openStore({ database, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true })).close();
const at = (file: string) => import(pathToFileURL(resolve(dist!, file)).href);
const { sqliteHistory } = await at('store/history-sqlite.js');
const { openSqliteWriterThread } = await at('store/sqlite-log-writer.js');
const { keyedHasher } = await at('history/identifiers.js');
const { historyEvent } = await at('history/event.js');
const thread = await openSqliteWriterThread(database, 1);
const history = sqliteHistory({ path: (database as { path: string }).path, thread, onWriteError: (e: Error) => { throw e; }, historyDays: 30, now: Date.now, keepBytes: 2 ** 30, maxBytes: 2 ** 31, maxEntries: 10_000_000 });
const hash = keyedHasher(Buffer.alloc(32, 7));
const PLACE = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };
const account = '00000000-0000-4000-8000-000000000001';
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const mem = () => {
  for (let i = 0; i < 4; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
// One person first, and their write-back: what the store makes once is not in the figure.
/** Person i; `crowd`: from an address of their own, else the shared one. */
const record = (i: number, crowd: boolean) => {
  const user = hash(account, 'user', `u-${i}`);
  history.record(historyEvent({ account, at: Date.now(), ip: hash(account, 'ip', crowd ? `5.0.${i >> 8 & 255}.${i & 255}` : '81.2.69.160'), email: hash(account, 'email', `user${i}@x.example`), identity: user, device: hash(account, 'device', `d${i}`), user, place: PLACE }));
};
record(-1, false);
await new Promise((r) => setTimeout(r, 300));
const before = mem();
for (let i = 0; i < PEOPLE; i++) {
  record(i, true);
  if (i % 100 === 0) await new Promise((r) => setImmediate(r));
}
await new Promise((r) => setTimeout(r, 1500));
const after = mem();
const s = history.stats();
// The first person's four identifiers were held before.
console.log(`${dist}: held ${s.cached}, estimated ${Math.round(s.bytes / s.cached)} bytes an identifier, measured ${Math.round((after - before) / (s.cached - 4))} (heap and array buffers after a collection), ${s.pending} not yet written`);
await history.close();
