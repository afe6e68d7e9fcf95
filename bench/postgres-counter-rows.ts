/**
 * `npx tsx bench/postgres-counter-rows.ts`: what the rows of a hot address's counters cost its
 * history read on PostgreSQL (a throwaway loopback server, test/support/postgres.ts). The address's
 * minute and hour windows are full (60 + 24 buckets) with one row per bucket (one replica writing
 * one shard, as now) or eight (a shard drawn for every batch, as before), beside 50,000 other
 * addresses' counters; one client then times the prepared read, one evaluation a statement, its
 * generic plan made. Alternated twice.
 */
import './temp-root.js';
import pg from 'pg';
import pino from 'pino';
import { parseDatabaseUrl } from '../src/config/store-url.js';
import { historyEvent } from '../src/history/event.js';
import { keyedHasher } from '../src/history/identifiers.js';
import { POSTGRES_HISTORY_STATEMENTS } from '../src/store/history-postgres.js';
import { openStore } from '../src/store/index.js';
import { startPostgres } from '../test/support/postgres.js';

const server = await startPostgres();
const hash = keyedHasher(Buffer.alloc(32, 7));
const A = 'acme';
const PLACE = { country: 'GB', latitude: 51.5, longitude: -0.09, radiusKm: 20, asn: 20712, anonymous: false };
for (const shards of [8, 1, 8, 1]) {
  const url = await server.createDatabase();
  await (await openStore({ database: parseDatabaseUrl(url) as never, logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true })).close();
  const c = new pg.Client(url);
  await c.connect();
  const user = hash(A, 'user', 'x');
  const e = historyEvent({ account: A, at: Date.now(), ip: hash(A, 'ip', '81.2.69.160'), email: hash(A, 'email', 'e'), identity: user, device: hash(A, 'device', 'd'), user, place: PLACE });
  await c.query(`insert into history_counts (account_id, key, grain, bucket, shard, n)
    select $1, $2::bytea, 1, $3::integer - b, s, 5 from generate_series(0, 59) b, generate_series(0, ${shards - 1}) s union all
    select $1, $2::bytea, 2, $4::integer - b, s, 5 from generate_series(0, 23) b, generate_series(0, ${shards - 1}) s`, [A, e.ip, e.minute, e.hour]);
  // Other addresses' counters around it.
  await c.query(`insert into history_counts (account_id, key, grain, bucket, shard, n) select $1, decode(md5(i::text), 'hex'), 2, $2::integer, 0, 1 from generate_series(1, 50000) i`, [A, e.hour]);
  await c.query('analyze');
  const vals = [A, e.minute, e.hour, e.since24h, e.since30d, e.ip, e.email, e.identity, e.device, e.user, e.country, '', '', '', '', '', [], [], [], [], []];
  const q = { name: 'r', text: POSTGRES_HISTORY_STATEMENTS.read(1), values: vals };
  for (let k = 0; k < 50; k++) await c.query(q);
  const t0 = performance.now();
  const n = 2000;
  for (let k = 0; k < n; k++) await c.query(q);
  const r = await c.query(q);
  console.log(`shards ${shards}: ${(((performance.now() - t0) * 1000) / n).toFixed(0)} µs a read (a round trip, one client), ip_minutes ${String(r.rows[0].ip_minutes)}`);
  await c.end();
}
await server.close();
