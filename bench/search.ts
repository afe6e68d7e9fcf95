/**
 * `npx tsx bench/search.ts`: searching the evaluation log as the admin API does (issue 14's target:
 * under 100 ms by e-mail, IP or user id on 1,000,000 logged evaluations, on SQLite and PostgreSQL).
 * Figures to compare on one machine, not bounds (no test asserts a speed).
 *
 * Fills the log straight into its tables (bulk inserts, not the log's queue: the write path has its
 * own figures in bench/store.ts), two accounts sharing it 9:1, over 30 days; then times the first
 * page (51 rows asked: the route's 50 and one to know whether there is a next) of
 * `Decisions.search`, the port the route calls, for a few hundred random existing values of each
 * filter: e-mail, IP, a /24, user id, a common rule, a rare rule, a label, and the first page with
 * no filter.
 * PostgreSQL is Debian's, started on 127.0.0.1 by test/support/postgres.ts, and ANALYZEd after the fill.
 *
 *   npx tsx bench/search.ts [--rows 1000000] [--queries 300] [--engines sqlite,postgres]
 */
import './temp-root.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import { ipKeyRange, type DecisionFilter } from '../src/store/decisions.js';
import { openStore, type Store } from '../src/store/index.js';
import { firstIdAt, ipKey } from '../src/store/log-record.js';
import { parseDatabaseUrl } from '../src/config/store-url.js';
import { startPostgres, type PostgresServer } from '../test/support/postgres.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, queries: { type: 'string', default: '300' }, engines: { type: 'string', default: 'sqlite,postgres' } } });
const ROWS = Math.min(5_000_000, Number(values.rows));
const QUERIES = Math.min(10_000, Number(values.queries));
const DAY = 86_400_000;
const NOW = Date.now();

/** One logged evaluation, about 1 KB: e-mails seen about three times each, users once in three rows, a few rules. */
function row(i: number) {
  const at = NOW - 30 * DAY + Math.floor((i / ROWS) * 30 * DAY);
  const id = `${firstIdAt(at).slice(0, 14)}7${(i & 0xfff).toString(16).padStart(3, '0')}-8${((i >>> 12) & 0xfff).toString(16).padStart(3, '0')}-${i.toString(16).padStart(12, '0')}`;
  const person = i % Math.ceil(ROWS / 3);
  const email = `user${person}@d${person % 5000}.example`;
  const ip = `${10 + (i % 200)}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const userId = i % 3 === 0 ? `user-${person}` : null;
  const rules = i % 1000 === 7 ? ['list_block'] : i % 10 === 1 ? ['email_disposable', 'ip_tor'] : i % 3 === 0 ? ['ip_datacenter'] : [];
  const request = JSON.stringify({ ip, email, event_type: 'account_register', user: userId === null ? undefined : { user_id: userId } });
  const response = JSON.stringify({
    id, event_type: 'account_register', score: { details: [], fraud_score: i % 100, state: 'approve' }, signals: [],
    email: { address: email, normalized: email, domain: `d${person % 5000}.example`, deliverable: null, disposable: false, free_provider: false, role_account: false },
    ip: { address: ip, version: 4, country_code: 'GB', country: 'United Kingdom', city: 'London', asn: 64501, as_organization: 'Example Networks', is_tor: false, is_proxy: false, is_datacenter: false },
    history: null, unavailable: ['email.mx'], evaluated_at: new Date(at).toISOString(), took_ms: 1.2,
  });
  return {
    values: [id, i % 10 === 0 ? 'globex' : 'acme', at, 'account_register', email, `d${person % 5000}.example`, ipKey(ip), userId, i % 2 === 0 ? `${(i % 100_000).toString(16).padStart(64, '0')}` : null,
      i % 7 === 0 ? 'review' : 'approve', i % 100, 1, request, response] as const,
    rules,
    /** One in 2,000 labelled fraud. */
    label: i % 2000 === 11 ? 'fraud' : null,
  };
}
const COLUMNS = ['id', 'account_id', 'evaluated_at', 'event_type', 'email', 'email_domain', 'ip_key', 'user_id', 'device_hash', 'state', 'fraud_score', 'rule_set_version', 'request', 'response'];
const CHUNK = 5_000;

function fillSqlite(path: string): void {
  const db = new Sqlite(path);
  db.pragma('journal_mode = WAL');
  const insert = db.prepare(`insert into evaluations (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
  const fired = db.prepare('insert into evaluation_rules (account_id, rule_id, evaluation_id) values (?, ?, ?)');
  const label = db.prepare('insert into labels (account_id, evaluation_id, label, reason, author, created_at) values (?, ?, ?, null, \'bench\', ?)');
  const chunk = db.transaction((from: number) => {
    for (let i = from; i < Math.min(ROWS, from + CHUNK); i++) {
      const r = row(i);
      insert.run(...r.values);
      for (const rule of r.rules) fired.run(r.values[1], rule, r.values[0]);
      if (r.label !== null) label.run(r.values[1], r.values[0], r.label, NOW);
    }
  });
  for (let i = 0; i < ROWS; i += CHUNK) chunk(i);
  db.exec('analyze');
  db.close();
}

async function fillPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const types = ['uuid', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'integer', 'integer', 'json', 'json'];
    // Each column one array parameter (JSON as text, cast per row), unnested into rows: one statement per chunk.
    const parameters = types.map((t, c) => `$${c + 1}::${t === 'json' ? 'text' : t}[]`).join(', ');
    const selected = COLUMNS.map((c, k) => (types[k] === 'json' ? `${c}::json` : c)).join(', ');
    for (let i = 0; i < ROWS; i += CHUNK) {
      const columns: unknown[][] = COLUMNS.map(() => []);
      const fired: string[][] = [[], [], []];
      const labelled: string[][] = [[], []];
      for (let j = i; j < Math.min(ROWS, i + CHUNK); j++) {
        const r = row(j);
        r.values.forEach((v, c) => columns[c]!.push(v));
        for (const rule of r.rules) {
          fired[0]!.push(r.values[1]);
          fired[1]!.push(rule);
          fired[2]!.push(r.values[0]);
        }
        if (r.label !== null) {
          labelled[0]!.push(r.values[1]);
          labelled[1]!.push(r.values[0]);
        }
      }
      await client.query('begin');
      await client.query(`insert into evaluations (${COLUMNS.join(', ')}) select ${selected} from unnest(${parameters}) as u(${COLUMNS.join(', ')})`, columns);
      await client.query('insert into evaluation_rules (account_id, rule_id, evaluation_id) select * from unnest($1::text[], $2::text[], $3::uuid[])', fired);
      await client.query(`insert into labels (account_id, evaluation_id, label, author, created_at) select a, e, 'fraud', 'bench', ${NOW} from unnest($1::text[], $2::uuid[]) as u(a, e)`, labelled);
      await client.query('commit');
    }
    await client.query('analyze');
  } finally {
    await client.end();
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Random existing values of each filter, the same on both engines. */
function cases(): Array<{ name: string; filter: (k: number) => DecisionFilter }> {
  const pick = (k: number, step = 1) => (Math.floor(((k * 2_654_435_761) % 2 ** 32) / 2 ** 32 * (ROWS / step)) * step);
  return [
    { name: 'no filter (first page)', filter: () => ({}) },
    { name: 'e-mail', filter: (k) => ({ email: String(row(pick(k)).values[4]) }) },
    { name: 'IP address', filter: (k) => ({ ipKeys: ipKeyRange(ipOf(pick(k)))! }) },
    { name: 'IP /24', filter: (k) => ({ ipKeys: ipKeyRange(`${ipOf(pick(k)).replace(/\.\d+$/, '.0')}/24`)! }) },
    { name: 'user id', filter: (k) => ({ userId: String(row(pick(k, 3)).values[7]) }) },
    { name: 'rule fired (1 in 3)', filter: () => ({ rule: 'ip_datacenter' }) },
    { name: 'rule fired (1 in 1000)', filter: () => ({ rule: 'list_block' }) },
    { name: 'label fraud (1 in 2000)', filter: () => ({ label: 'fraud' }) },
    { name: 'e-mail + rule', filter: (k) => ({ email: String(row(pick(k)).values[4]), rule: 'ip_datacenter' }) },
  ];
}
const ipOf = (i: number) => `${10 + (i % 200)}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

async function measure(store: Store): Promise<void> {
  for (const { name, filter } of cases()) {
    const ms: number[] = [];
    let found = 0;
    for (let k = 1; k <= QUERIES; k++) {
      const f = filter(k);
      const start = performance.now();
      const rows = await store.decisions.search('acme', f, { limit: 51 });
      ms.push(performance.now() - start);
      found += rows.length;
    }
    ms.sort((a, b) => a - b);
    console.log(`  ${name.padEnd(24)} p50 ${percentile(ms, 50).toFixed(2).padStart(7)} ms  p99 ${percentile(ms, 99).toFixed(2).padStart(7)} ms  (${QUERIES} queries, ${(found / QUERIES).toFixed(1)} rows a page)`);
  }
}

async function bench(url: string, fill: () => Promise<void> | void): Promise<void> {
  const database = parseDatabaseUrl(url);
  if ('error' in database) throw new Error(database.error);
  // Opened once to migrate, closed for the fill, opened again as the service would be.
  await (await openStore({ database, logger: pino({ level: 'warn' }), retentionDays: 0, writeLog: false })).close();
  const started = performance.now();
  await fill();
  console.log(`${database.engine}: ${ROWS.toLocaleString('en')} evaluations filled in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const store = await openStore({ database, logger: pino({ level: 'warn' }), retentionDays: 0, writeLog: false });
  try {
    await measure(store);
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const engines = values.engines.split(',');
  if (engines.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'risk-bench-search-'));
    const path = join(dir, 'risk.sqlite');
    try {
      await bench(`sqlite:${path}`, () => fillSqlite(path));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (engines.includes('postgres')) {
    let server: PostgresServer | undefined;
    try {
      server = await startPostgres();
      const url = await server.createDatabase('search');
      await bench(url, () => fillPostgres(url));
    } finally {
      await server?.close();
    }
  }
}

await main();
