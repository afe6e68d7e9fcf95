/**
 * The store's own figures, for `npm run bench` (bench/run.ts calls these): how many evaluations a
 * second the log's batch writer stores on each engine; look-ups by id and by e-mail and a prune on
 * a log of `rows` evaluations; and the service's start-up time on that store. Everything on
 * 127.0.0.1 (PostgreSQL from Debian's package, started by test/support/postgres.ts).
 */
import './temp-root.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { sql } from 'kysely';
import { openStore, type Store } from '../src/store/index.js';
import { firstIdAt } from '../src/store/log-record.js';
import { type LogRecord } from '../src/core/log-record.js';
import { parseDatabaseUrl, type DatabaseUrl } from '../src/config/store-url.js';
import { freePort } from '../test/support/process.js';
import { startFlags } from './start-flags.js';

export interface StoreFigures {
  engine: string;
  rows: number;
  /** Evaluations a second the batch writer stored while filling the log. */
  writes_per_s: number;
  lookup_by_id_ms: { mean: number; p99: number };
  lookup_by_email_ms: { mean: number; p99: number };
  prune: { rows: number; ms: number; rows_per_s: number };
  size_mb: number | null;
  start_up_ms: number | null;
}

const DAY = 86_400_000;
const RESPONSE_PADDING = 'x'.repeat(700);

function database(url: string): DatabaseUrl {
  const parsed = parseDatabaseUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

/** About one evaluation in three fires a rule, one in ten two: what the log's fired-rule rows cost is in the write figure. */
export const firedRules = (i: number): string[] => (i % 10 === 1 ? ['email_disposable', 'ip_tor'] : i % 3 === 0 ? ['ip_datacenter'] : []);

/** A record shaped like a real one (about 1.3 KB): varied e-mails, domains, addresses, users and devices. */
function record(i: number, at: number): LogRecord {
  const seq = (i & 0xfff).toString(16).padStart(3, '0');
  const id = `${firstIdAt(at).slice(0, 14)}7${seq}-8${(i >>> 12 & 0xfff).toString(16).padStart(3, '0')}-${i.toString(16).padStart(12, '0')}`;
  const email = `user${i}@d${i % 5000}.example`;
  const ip = `${10 + (i % 200)}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return {
    id, account_id: i % 10 === 0 ? 'globex' : 'acme', event_type: 'account_register', email, email_domain: `d${i % 5000}.example`, ip,
    user_id: i % 3 === 0 ? `user-${i}` : null, device_hash: i % 2 === 0 ? `dev-${i % 100_000}` : null, state: 'approve', fraud_score: i % 100, rule_set_version: 1, fired: firedRules(i),
    request: JSON.stringify({ ip, email, event_type: 'account_register', user: { user_id: `user-${i}` } }),
    response: JSON.stringify({ id, event_type: 'account_register', score: { details: [], fraud_score: 0, state: 'approve' }, email: { address: email, padding: RESPONSE_PADDING }, ip: { address: ip }, unavailable: [] }),
    shadow: null,
  };
}

const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return { mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length), p99: round(sorted[Math.floor(sorted.length * 0.99)]!) };
};

/** Fills the log through the real queue and writer, `rows` evaluations over the last 40 days. */
async function fill(store: Store, rows: number, now: number): Promise<number> {
  const started = performance.now();
  const chunk = 5_000;
  for (let i = 0; i < rows; i += chunk) {
    for (let j = i; j < Math.min(rows, i + chunk); j++) store.log.record(record(j, now - 40 * DAY + Math.floor((j / rows) * 40 * DAY)));
    await store.log.flush();
  }
  const { written, dropped, failed } = store.log.stats();
  if (written !== rows || dropped > 0 || failed > 0) throw new Error(`fill: written ${written} of ${rows}, dropped ${dropped}, failed ${failed}`);
  return Math.round(rows / ((performance.now() - started) / 1000));
}

async function lookups(store: Store, rows: number, now: number): Promise<Pick<StoreFigures, 'lookup_by_id_ms' | 'lookup_by_email_ms'>> {
  const db = store.engine.db;
  const byId: number[] = [];
  const byEmail: number[] = [];
  for (let k = 0; k < 1_000; k++) {
    const i = Math.floor(Math.random() * rows);
    const r = record(i, now - 40 * DAY + Math.floor((i / rows) * 40 * DAY));
    let t = performance.now();
    const one = await db.selectFrom('evaluations').selectAll().where('id', '=', r.id).executeTakeFirst();
    byId.push(performance.now() - t);
    if (!one) throw new Error(`lookup by id: ${r.id} not found`);
    t = performance.now();
    // The console's question: this account's evaluations of this address, newest first.
    const page = await db.selectFrom('evaluations').select(['id', 'evaluated_at', 'state', 'fraud_score']).where('account_id', '=', r.account_id)
      .where('email', '=', r.email).orderBy('id', 'desc').limit(50).execute();
    byEmail.push(performance.now() - t);
    if (page.length === 0) throw new Error(`lookup by e-mail: ${r.email} not found`);
  }
  return { lookup_by_id_ms: stats(byId), lookup_by_email_ms: stats(byEmail) };
}

/** Time from spawn to a ready /readyz of the built service on this store. */
async function startUp(url: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...startFlags(), 'dist/server.js'], {
    env: { PATH: process.env.PATH!, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'fatal', DATABASE_URL: url, API_KEYS: `rk_${'b'.repeat(43)}`, DNS_SERVERS: '127.0.0.1:9', DATA_DIR: mkdtempSync(join(tmpdir(), 'risk-bench-data-')) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stdout!.on('data', (chunk) => (errors += chunk));
  child.stderr!.on('data', (chunk) => (errors += chunk));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) before it was ready: ${errors}`);
      if (performance.now() - started > 60_000) throw new Error('not ready within 60 s');
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
      if (ok) return Math.round(performance.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    child.kill('SIGTERM');
  }
}

/** Evaluations in the log of the store at `url` (read after a benchmarked service has stopped). */
export async function loggedEvaluations(url: string): Promise<number> {
  const store = await openStore({ database: database(url), logger: pino({ level: 'warn' }), retentionDays: 0, writeLog: false });
  try {
    const row = await store.engine.db.selectFrom('evaluations').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await store.close();
  }
}

/**
 * One engine: fill the log with `rows` evaluations over 40 days, look up, start the service on it,
 * then prune the oldest quarter (those past RETENTION_DAYS=30).
 */
export async function benchStore(url: string, rows: number, options: { startUp: boolean }): Promise<StoreFigures> {
  const now = Date.now();
  const store = await openStore({ database: database(url), logger: pino({ level: 'warn' }), retentionDays: 30, writeLog: true, logQueue: { maxEntries: 10_000 } });
  try {
    const writes = await fill(store, rows, now);
    const looked = await lookups(store, rows, now);
    // With every row still there: the start-up the issue asks about.
    const startUpMs = options.startUp ? await startUp(url) : null;
    const started = performance.now();
    const pruned = await store.log.prune();
    const ms = Math.round(performance.now() - started);
    let size: number | null = null;
    if (store.engine.kind === 'sqlite') {
      const path = (store.engine.database as { path: string }).path;
      size = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    } else {
      const result = await sql<{ size: number }>`select pg_database_size(current_database()) as size`.execute(store.engine.db);
      size = Number(result.rows[0]!.size);
    }
    return {
      engine: store.engine.kind, rows, writes_per_s: writes, ...looked,
      prune: { rows: pruned, ms, rows_per_s: Math.round(pruned / Math.max(0.001, ms / 1000)) },
      size_mb: Math.round(size / 2 ** 20),
      start_up_ms: startUpMs,
    };
  } finally {
    await store.close();
  }
}
