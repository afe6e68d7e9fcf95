/**
 * `npx tsx bench/postgres-backlog.ts`: how long the PostgreSQL history writer takes to write a
 * backlog, as after the server was slow or down for a while. New people of one address are
 * recorded while a lock holds the writer back (reads go on), then the lock is let go and the time
 * until nothing is pending is measured, for each `--batch-keys` given (history-postgres.ts's
 * BATCH_KEYS; one batch for the whole backlog when it is past it). A throwaway loopback PostgreSQL
 * (test/support/postgres.ts); the write budget is lifted, so a batch too large for
 * WRITE_BUDGET_MS, or one that waited past it, shows its time instead of being given up.
 *
 *   npx tsx bench/postgres-backlog.ts --people 16700 --batch-keys 5000,60000
 */
import './temp-root.js';
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { parseDatabaseUrl } from '../src/config/store-url.js';
import { historyEvent } from '../src/history/event.js';
import { keyedHasher } from '../src/history/identifiers.js';
import { BATCH_KEYS, postgresHistory } from '../src/store/history-postgres.js';
import { openStore } from '../src/store/index.js';
import { startPostgres } from '../test/support/postgres.js';

const { values: options } = parseArgs({
  options: {
    people: { type: 'string', default: '16700' },
    'batch-keys': { type: 'string', default: `${BATCH_KEYS},60000` },
  },
});
const PLACE = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };
const hash = keyedHasher(Buffer.alloc(32, 7));
const server = await startPostgres();
try {
  for (const batchKeys of options['batch-keys']!.split(',').map(Number)) {
    const url = await server.createDatabase();
    const database = parseDatabaseUrl(url);
    if ('error' in database) throw new Error(database.error);
    await (await openStore({ database, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true })).close(); // migrated
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    const records = new pg.Pool({ connectionString: url, max: 10 });
    const history = postgresHistory(pool, records, { stepTimeoutMs: 1_000, historyDays: 30, now: Date.now, batchKeys, writeBudgetMs: 600_000 });
    const blocker = await pool.connect();
    await blocker.query('begin');
    await blocker.query('lock table history_counts in share mode'); // the writer waits; reads do not
    const ip = hash('bench', 'ip', '81.2.69.160');
    const at = Date.now();
    let reads: unknown[] = [];
    for (let i = 0; i < Number(options.people); i++) {
      const user = hash('bench', 'user', `u${i}`);
      reads.push(history.record(historyEvent({
        account: 'bench', at, ip, email: hash('bench', 'email', `u${i}@mail-bench.example`), identity: user, device: hash('bench', 'device', `d${i}`), user, place: PLACE,
      })));
      if (reads.length === 64) await Promise.all(reads.splice(0));
    }
    await Promise.all(reads);
    reads = [];
    const { pending, refused } = history.stats();
    const started = performance.now();
    await blocker.query('rollback');
    blocker.release();
    while ((history.stats().pending ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const ms = performance.now() - started;
    const batches = Math.ceil((pending ?? 0) / batchKeys);
    console.log(`batch keys ${batchKeys}: ${pending} identifiers waiting (${refused} events refused past the bound) written in ${Math.round(ms)} ms` +
      ` (${batches} batches, ${Math.round(ms / batches)} ms each); failed ${history.stats().failed}`);
    await history.close(); // ends its pool
    await pool.end();
  }
} finally {
  await server.close();
}
