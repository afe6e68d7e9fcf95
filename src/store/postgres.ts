import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Engine, LogErasure } from './engine.js';
import { historyStatementTimeoutMs, postgresHistory } from './history-postgres.js';
import { LOG_DEFAULTS } from './evaluation-log.js';
import { hourlyCounts, hourOf, LOG_COLUMNS, logColumns, timeOfId } from './log-record.js';
import { type LogRecord } from '../core/log-record.js';
import type { Database } from './schema.js';
import { evaluationEvent } from './webhook-events.js';
import { columnLiteral } from './pg-arrays.js';
import { StoreError, type DatabaseUrl } from '../config/store-url.js';

/** pg_advisory_xact_lock key of the schema lock (any constant; this one spells "risk" in ASCII). */
const SCHEMA_LOCK = 0x7269736b;
const MIN_SERVER_VERSION = 140000;
/** A query the log writer or the change poll sends waits at most this long for its answer. */
const QUERY_TIMEOUT_MS = 5_000;

export interface PostgresOptions {
  /** Called when an idle pooled connection breaks (the server restarted, the network dropped). */
  onPoolError: (error: Error) => void;
}

/**
 * PostgreSQL through a pg Pool (TLS and every other connection option from the URL, parsed by
 * pg-connection-string: `?sslmode=require`, `sslrootcert=…`). int8 columns come back as numbers:
 * every one of ours holds milliseconds or a count, well inside 2^53.
 */
export async function openPostgres(database: DatabaseUrl & { engine: 'postgres' }, options: PostgresOptions): Promise<Engine> {
  const poolOf = (config: pg.PoolConfig) => {
    const p = new pg.Pool({
      connectionString: database.connectionString,
      max: 10,
      connectionTimeoutMillis: QUERY_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      application_name: 'risk-evaluation',
      types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
      ...config,
    });
    // Without a listener, an idle client's error would be thrown from the pool and end the process.
    p.on('error', options.onPoolError);
    // The pool listens only while a client is idle; a client checked out with pool.connect() (a
    // transaction, the history writer) whose server goes away between two queries would emit an
    // error no one hears, and end the process. The query that follows fails and is handled where it
    // runs; this listener only reports the error.
    p.on('connect', (client) => client.on('error', options.onPoolError));
    return p;
  };
  const pool = poolOf({});
  try {
    const { rows } = await pool.query<{ server_version_num: string }>('show server_version_num');
    const version = Number(rows[0]!.server_version_num);
    if (version < MIN_SERVER_VERSION) throw new Error(`PostgreSQL 14 or newer is needed; this server is ${Math.floor(version / 10000)}`);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StoreError(database, `cannot use the database: ${(error as Error).message || (error as { code?: string }).code}`);
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });

  return {
    kind: 'postgres',
    database,
    db,
    lockedTransaction: (fn) =>
      db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${SCHEMA_LOCK})`.execute(trx);
        return fn(trx);
      }),
    lockAccount: (trx, id) => trx.selectFrom('accounts').selectAll().where('id', '=', id).forUpdate().executeTakeFirst(),
    async revision() {
      const { rows } = await pool.query<{ revision: number }>({ text: 'select revision from store_revision where id = 1', query_timeout: QUERY_TIMEOUT_MS } as pg.QueryConfig);
      return rows[0]!.revision;
    },
    async openWriters(needs) {
      if (needs.history === null) return { log: needs.log ? postgresLogWriter(pool) : null, history: null };
      // The history statement on connections of its own, whose server ends any statement past its
      // limit (a lock stall), so a statement the client gave up on never stays on the server.
      const recordPool = poolOf({ application_name: 'risk-evaluation-history', statement_timeout: historyStatementTimeoutMs(needs.history.stepTimeoutMs) });
      // One connection opened now: the first evaluations do not spend their history deadline connecting.
      (await recordPool.connect()).release();
      return { log: needs.log ? postgresLogWriter(pool) : null, history: postgresHistory(pool, recordPool, needs.history) };
    },
    async close() {
      await db.destroy();
    },
  };
}

/**
 * One statement per batch: a multi-row INSERT of the evaluations, every value its own parameter, so
 * the JSON text goes to the server as it is (no array-literal escaping of its quotes), and in the
 * same statement the rules that fired, as three arrays (their count varies; the parameter count
 * does not). Statement texts are cached per batch size (a few at a time).
 */
function postgresLogWriter(pool: pg.Pool) {
  const texts = new Map<number, string>();
  const insertText = (rows: number): string => {
    let text = texts.get(rows);
    if (text === undefined) {
      const width = LOG_COLUMNS.length;
      const json = new Set(['request', 'response', 'shadow']);
      const tuples: string[] = [];
      for (let r = 0; r < rows; r++) {
        tuples.push(`(${LOG_COLUMNS.map((column, c) => `$${r * width + c + 1}${json.has(column) ? '::json' : ''}`).join(', ')})`);
      }
      const fired = rows * width;
      const reviews = fired + 3;
      const events = reviews + 6;
      const hours = events + 4;
      text = `with logged as (insert into evaluations (${LOG_COLUMNS.join(', ')}) values ${tuples.join(', ')}), ` +
        // Their webhook events, one delivery per endpoint that is on and takes the event (src/store/webhook-events.ts).
        'queued as (insert into webhook_deliveries (id, account_id, endpoint_id, type, payload, status, attempts, next_attempt_at, created_at) ' +
        `select 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.account_id, w.id, r.t, r.p, 'pending', 0, r.o, r.o ` +
        `from unnest($${events + 1}::text[], $${events + 2}::text[], $${events + 3}::text[], $${events + 4}::bigint[]) as r(a, t, p, o) ` +
        `join webhook_endpoints w on w.account_id = r.a and w.enabled = 1 and position(',' || r.t || ',' in ',' || w.events || ',') > 0), ` +
        // Evaluations answered `review` open their review items in the same statement (migration 11).
        'reviewed as (insert into review_items (account_id, evaluation_id, event_type, user_id, email, opened_at, status) ' +
        `select a, e, t, u, m, o, 'open' from unnest($${reviews + 1}::text[], $${reviews + 2}::uuid[], $${reviews + 3}::text[], $${reviews + 4}::text[], $${reviews + 5}::text[], $${reviews + 6}::bigint[]) as r(a, e, t, u, m, o)), ` +
        // Hit rates: the batch's counts added to their hours (migration 13), rows in key order.
        `hours as (insert into evaluation_hours (account_id, event_type, hour, evaluations) select * from unnest($${hours + 1}::text[], $${hours + 2}::text[], $${hours + 3}::bigint[], $${hours + 4}::int[]) ` +
        'on conflict (account_id, event_type, hour) do update set evaluations = evaluation_hours.evaluations + excluded.evaluations), ' +
        `rule_counts as (insert into rule_hours (account_id, event_type, hour, rule_id, fired, unknown) select * from unnest($${hours + 5}::text[], $${hours + 6}::text[], $${hours + 7}::bigint[], $${hours + 8}::text[], $${hours + 9}::int[], $${hours + 10}::int[]) ` +
        'on conflict (account_id, event_type, hour, rule_id) do update set fired = rule_hours.fired + excluded.fired, unknown = rule_hours.unknown + excluded.unknown) ' +
        `insert into evaluation_rules (account_id, rule_id, evaluation_id) select * from unnest($${fired + 1}::text[], $${fired + 2}::text[], $${fired + 3}::uuid[])`;
      if (texts.size >= 16) texts.clear(); // bounded: batch sizes vary with traffic
      texts.set(rows, text);
    }
    return text;
  };
  return {
    async write(records: LogRecord[]) {
      const values: unknown[] = [];
      const fired: [string[], string[], string[]] = [[], [], []];
      const reviews: [string[], string[], string[], Array<string | null>, string[], number[]] = [[], [], [], [], [], []];
      const events: [string[], string[], string[], number[]] = [[], [], [], []];
      for (const record of records) {
        const columns = logColumns(record);
        values.push(...columns);
        const event = evaluationEvent(record, columns[2] as number);
        if (event !== null) {
          events[0].push(record.account_id);
          events[1].push(event.type);
          events[2].push(event.payload);
          events[3].push(columns[2] as number);
        }
        if (record.state === 'review') {
          reviews[0].push(record.account_id);
          reviews[1].push(record.id);
          reviews[2].push(record.event_type);
          reviews[3].push(record.user_id);
          reviews[4].push(columns[4] as string);
          reviews[5].push(columns[2] as number);
        }
        for (const rule of record.fired) {
          fired[0].push(record.account_id);
          fired[1].push(rule);
          fired[2].push(record.id);
        }
      }
      const counts = hourlyCounts(records);
      const columnsOf = <T extends unknown[]>(rows: T[], width: number) => Array.from({ length: width }, (_, c) => rows.map((row) => row[c]));
      // The arrays as literals where no element needs escaping (pg-arrays.ts): ~13 µs of the main
      // thread an evaluation was the client's escaping of the fired rules' ids (bench/profile.ts --postgres).
      for (const column of [...fired, ...reviews, ...events, ...columnsOf(counts.evaluations, 4), ...columnsOf(counts.rules, 6)]) values.push(columnLiteral(column));
      // A full batch, the usual one under load, is a named statement: each pooled connection
      // parses and plans it once. Other sizes are sent unnamed, so the server keeps no plan per size.
      const name = records.length === LOG_DEFAULTS.batchSize ? `evaluations_insert_${records.length}` : undefined;
      await pool.query({ name, text: insertText(records.length), values, query_timeout: QUERY_TIMEOUT_MS } as pg.QueryConfig);
    },
    async prune(beforeId: string, limit: number) {
      // Labels and review items go with their evaluations: their ids sort by time.
      await pool.query({ text: 'delete from labels where evaluation_id < $1', values: [beforeId], query_timeout: QUERY_TIMEOUT_MS * 6 } as pg.QueryConfig);
      await pool.query({ text: 'delete from review_items where evaluation_id < $1', values: [beforeId], query_timeout: QUERY_TIMEOUT_MS * 6 } as pg.QueryConfig);
      for (const table of ['evaluation_hours', 'rule_hours']) {
        await pool.query({ text: `delete from ${table} where hour < $1`, values: [hourOf(timeOfId(beforeId))], query_timeout: QUERY_TIMEOUT_MS * 6 } as pg.QueryConfig);
      }
      const result = await pool.query({
        text: 'delete from evaluations where id in (select id from evaluations where id < $1 order by id limit $2)',
        values: [beforeId, limit],
        query_timeout: QUERY_TIMEOUT_MS * 6,
      } as pg.QueryConfig);
      return result.rowCount ?? 0;
    },
    erase: (account: string, userId: string | null, email: string | null) => eraseLogRows(pool, account, userId, email),
    async close() {},
  };
}

/** A person's evaluations and their labels, in one transaction. */
export async function eraseLogRows(pool: pg.Pool, account: string, userId: string | null, email: string | null): Promise<LogErasure> {
  const client = await pool.connect();
  const person = '(($2::text is not null and user_id = $2) or ($3::text is not null and email = $3))';
  try {
    await client.query('begin');
    const labels = await client.query({
      text: `delete from labels where account_id = $1 and evaluation_id in (select id from evaluations where account_id = $1 and ${person})`,
      values: [account, userId, email],
    });
    await client.query({
      text: `delete from review_items where account_id = $1 and evaluation_id in (select id from evaluations where account_id = $1 and ${person})`,
      values: [account, userId, email],
    });
    const evaluations = await client.query({ text: `delete from evaluations where account_id = $1 and ${person}`, values: [account, userId, email] });
    await client.query('commit');
    return { evaluations: evaluations.rowCount ?? 0, labels: labels.rowCount ?? 0 };
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
