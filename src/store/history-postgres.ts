import type pg from 'pg';
import { GRAIN_HOUR, GRAIN_MINUTE, HOURS_IN_WINDOW, MINUTES_IN_WINDOW, SET_ACCOUNTS, SET_COUNTRIES, SET_DEVICES, SET_KEEP } from '../history/caps.js';
import type { HistoryEvent, Prior } from '../history/event.js';
import type { Place } from '../history/place.js';
import type { HistoryStore } from '../history/store.js';
import { postgresMaintenance, type HistoryMaintenanceOptions } from './history-maintenance.js';
import { arrayLiteral, textLiteral } from './pg-arrays.js';

/**
 * PostgreSQL: one read per evaluation, and no row lock taken on the request path. The evaluation
 * reads what came before it (one row of a read-only statement: a constant number of index reads,
 * each at most 101 entries; the evaluations waiting go in one statement, `read` below); once it is back, its own changes go into this replica's pending changes,
 * which a writer sends every FLUSH_DELAY_MS in one transaction for the whole batch, summed (an
 * account farm's 1,000 events a second on one IP are one counter row update per flush, not 1,000
 * statements queued on its lock: issue 30). What an evaluation reads is the snapshot plus this
 * replica's changes not yet in it: counters of batches the snapshot does not show (told by the
 * batch's transaction id against the read's snapshot, so a batch is never counted twice or not at
 * all), set members as a union with the pending ones (exact: a member is never counted twice),
 * first and last seen as least and greatest. Other replicas' events are seen once their writer
 * has flushed them: within FLUSH_DELAY_MS plus a round trip. Every change only adds up (sums,
 * greatest, least), so replicas writing together never lose each other's events; a batch locks
 * its rows in one order (counters, members, identifiers; by key within each), so two replicas'
 * batches never deadlock. The writer's commits do not wait for the disk (synchronous_commit off on
 * its connections): on a crash of the PostgreSQL server, the last fraction of a second of history
 * may be lost (counts a few events low). A batch that fails before its commit is sent (a statement
 * cancelled, a connection lost, the server down) is sent again while its WRITE_BUDGET_MS lasts;
 * then its events are lost and counted as `failed`. A batch is closed at BATCH_KEYS identifiers and
 * the next begun, so a backlog (the server slow or down for a while) is written as several
 * transactions, each within its budget. Past MAX_PENDING_KEYS identifiers waiting in all, an event
 * is still answered from what was read, but not recorded (`refused`).
 */
/** How often the writer sends the pending changes. */
export const FLUSH_DELAY_MS = 50;
/**
 * A batch's time, from its first change or the recording of its first event, whichever came first
 * (Batch.opened), however long it then waited behind other batches: its attempts begin within it,
 * each attempt's statements may run for what is left of it (their statement_timeout, not the
 * reads' historyStatementTimeoutMs: the writer is one connection sending one batch at a time, so it
 * piles up no backends), and no statement or commit is sent past it. A stall of up to three seconds
 * or so (a lock, a loaded server, a failover's reconnect) loses no history: the batch that waited
 * out the lock is written, not cancelled and lost, and so is the one collected behind it, in what
 * is left of its time. Under the erasure's second pass (ERASE_AGAIN_MS): an event recorded before
 * an erasure has landed or been given up by then, so it cannot write the person back after it (but
 * for a velocity counter counted once its read is back, up to the read's limit later: `countAfter`).
 * Counted from when the writer took a batch, as it was, the batch collected behind one that failed
 * had a fresh budget, and could land some 8 s after its first event.
 */
export const WRITE_BUDGET_MS = 4_000;
/** The pause after a batch's first failed attempt; each next pause twice the last (100, 200, 400, 800, 1,600 ms). */
const RETRY_PAUSE_MS = 100;
/** An attempt is not begun with less of the budget left than this. */
const MIN_ATTEMPT_MS = 100;
/** The writer's application_name in pg_stat_activity, apart from the reads' (risk-evaluation-history). */
export const WRITER_NAME = 'risk-evaluation-history-writer';
/** The writer's transaction, begun in one round trip, with its id (see Batch.xid); `ms`: each statement's limit (0 would be none). */
const beginWrite = (ms: number) => `begin; set local synchronous_commit = off; set local statement_timeout = ${Math.max(1, Math.round(ms))};
  set local application_name = '${WRITER_NAME}'; select pg_current_xact_id()::text as xid`;
/** Identifiers with changes waiting to be written, at most, in every batch not yet written (about 300 bytes each, and their members). */
export const MAX_PENDING_KEYS = 50_000;
/**
 * Identifiers a batch is closed at (the next event goes in a new one; a read statement's events
 * join one batch together, so it may pass this by theirs). After a stall, the batches that piled up
 * are each written, or given up, within their own WRITE_BUDGET_MS, where one transaction holding
 * them all could fit in none: MAX_PENDING_KEYS new people's identifiers took 4.9-5.0 s as one on a
 * loopback server, and 4.3-5.1 s as ten of 5,000 (bench/postgres-backlog.ts, without the budget).
 */
export const BATCH_KEYS = 5_000;
/** Read statements in flight at once, at most (of the pool's 10 connections; the writer takes one). */
export const READS_IN_FLIGHT = 2;
/** Evaluations one read statement carries, at most. */
export const READ_BATCH = 64;
/**
 * Evaluations the recorder lets wait for their reads at once (HistoryStore.inFlight), and for one IP
 * address or device. A read misses none of this replica's events in flight beside it (`read`), so
 * the per-key limit is only about sharing: one address may fill one statement, and its evaluations
 * past that wait behind their own; four statements' worth in all, so three such addresses still
 * leave a statement's worth of places to everyone else. (At the recorder's 4 a key, an account farm
 * from one address made statements of 1–2 evaluations, each ~0.8 ms of server time; at 64,
 * `bench/profile.ts --postgres`, one address at 50 connections: 422 → 700–762 req/s new person,
 * 558 → 1,212–1,284 one person.)
 */
export const HISTORY_IN_FLIGHT = 4 * READ_BATCH;
export const KEY_IN_FLIGHT = READ_BATCH;
/**
 * Counters are spread over this many rows per bucket, so replicas' batches seldom queue on one
 * row's lock; a read sums them. Each replica writes one shard, drawn at start: its own batches go
 * one at a time and never wait on each other; two replicas that drew the same one (1 in 8) wait on
 * each other's commits (synchronous_commit off: short), as they did for a batch in 8 before. (A
 * shard drawn for every batch filled all eight rows of each bucket from one replica: a hot
 * address's read summed 8 × 84 counter rows of its minute and hour windows;
 * `bench/postgres-counter-rows.ts`: 1.0–1.3 ms a read against 0.70–0.93 with one row a bucket.)
 */
const SHARDS = 8;
/**
 * Identifiers this replica writes before it has the history tables analyzed, if PostgreSQL never
 * has. A fresh store's tables have no statistics for the first minute or so (autovacuum's naptime):
 * every path then costs about a row, and the planner read counters through the smallest index,
 * `history_counts_age` (grain, bucket), filtering the key (auto_explain in a new-person run on
 * PostgreSQL 15: 617 rows for each of four counters, for every evaluation). A prepared statement's
 * generic plan made then lasted until an ANALYZE invalidated it.
 */
const ANALYZE_AFTER_KEYS = 1_000;
const HISTORY_TABLES = ['history_counts', 'history_members', 'history_keys', 'history_velocity'];

/** The read's columns for each evaluation, in its VALUES rows (then its position, `i`). */
const READ_TYPES = ['text', 'integer', 'integer', 'bigint', 'bigint', 'bytea', 'bytea', 'bytea', 'bytea', 'bytea', 'bytea', 'text', 'text', 'text', 'text', 'text'];

/**
 * The read of `size` evaluations (`e`: a VALUES row each, with its position `i`; rows past the
 * evaluations sent are nulls, and read nothing), one row each: per row, a constant number of index
 * reads, each at most SET_KEEP entries. Pending members (this replica's, not yet written) come as
 * comma-separated hex, one text per set and evaluation; velocity reads as five arrays after the
 * rows, each read tagged with its evaluation's position. A VALUES list, not arrays to unnest: the
 * planner then counts the rows a generic plan reads as exactly as a custom one, and keeps the
 * generic plan after five executions, as for any prepared statement; with arrays it estimated ten
 * evaluations, never chose the generic plan, and planned twenty subqueries afresh at every
 * execution (`bench/postgres-reads.ts`, four reads in flight: server CPU 2.8 ms an evaluation
 * against 1.75 before batching). Sizes are powers of two (readSize): a few prepared statements per
 * connection. Every look-up is one the planner can only make per row, by key, whatever the
 * statistics say: scalar subqueries, and the user's row a lateral one with a limit. An `exists` may
 * be planned as a hash of the whole table, and a join as a hash join over a sequential scan; with
 * a young store's statistics (ANALYZE_AFTER_KEYS) the generic plan of 64 evaluations did both, on
 * history_members and history_keys, and kept them as the tables grew: a read's cost then grew with
 * the store until autovacuum analyzed it (`bench/postgres-reads.ts`, concurrency 64: server CPU
 * 0.8 → 1.7 ms an evaluation over four rounds of 5,000 new people).
 */
function readStatement(size: number): string {
  const rows: string[] = [];
  for (let r = 0; r < size; r++) {
    const first = r * READ_TYPES.length + 1;
    rows.push(`(${READ_TYPES.map((type, c) => `$${first + c}::${type}`).join(', ')}, ${r + 1})`);
  }
  const v = size * READ_TYPES.length + 1;
  return `
select
  (select pg_current_snapshot()::text) as snapshot,
  (select coalesce(sum(n), 0) from history_counts where account_id = e.a and key = e.ip and grain = 1 and bucket > e.minute - ${MINUTES_IN_WINDOW}) as ip_minutes,
  (select coalesce(sum(n), 0) from history_counts where account_id = e.a and key = e.ip and grain = 2 and bucket > e.hour - ${HOURS_IN_WINDOW}) as ip_hours,
  ${setCount('e.ip', 'a', 'e.since24h', 'e.p_ip')} as ip_accounts,
  (select last_seen from history_members where account_id = e.a and key = e.ip and kind = 'a' and member = e.identity) as ip_accounts_current,
  (select coalesce(sum(n), 0) from history_counts where account_id = e.a and key = e.email and grain = 2 and bucket > e.hour - ${HOURS_IN_WINDOW}) as email_hours,
  (select first_seen from history_keys where account_id = e.a and key = e.email) as email_first_seen,
  ${setCount('e.email', 'd', 'e.since30d', 'e.p_email')} as email_devices,
  (select last_seen from history_members where account_id = e.a and key = e.email and kind = 'd' and member = e.device) as email_devices_current,
  (select coalesce(sum(n), 0) from history_counts where account_id = e.a and key = e.device and grain = 1 and bucket > e.minute - ${MINUTES_IN_WINDOW}) as device_minutes,
  (select first_seen from history_keys where account_id = e.a and key = e.device) as device_first_seen,
  ${setCount('e.device', 'a', 'e.since30d', 'e.p_device')} as device_accounts,
  (select last_seen from history_members where account_id = e.a and key = e.device and kind = 'a' and member = e.identity) as device_accounts_current,
  u.first_seen as user_first_seen, u.last_seen as user_last_seen, u.country as user_country, u.latitude as user_latitude,
  u.longitude as user_longitude, u.radius_km as user_radius_km, u.asn as user_asn, u.anonymous as user_anonymous,
  ${setCount('e.usr', 'd', 'e.since30d', 'e.p_user_devices')} as user_devices,
  (select last_seen from history_members where account_id = e.a and key = e.usr and kind = 'd' and member = e.device) as user_devices_current,
  ${setCount('e.usr', 'c', 'e.since24h', 'e.p_user_countries')} as user_countries,
  (select last_seen from history_members where account_id = e.a and key = e.usr and kind = 'c' and member = e.country) as user_countries_current,
  (select true from history_members where account_id = e.a and key = e.usr and kind = 'd' limit 1) is not null as user_has_devices,
  (select true from history_members where account_id = e.a and key = e.usr and kind = 'c' limit 1) is not null as user_has_countries,
  (select coalesce(array_agg(q.v order by q.j), '{}') from (
    select r.j, (select coalesce(sum(n), 0) from history_velocity where account_id = e.a and key = r.k and series = r.s and bucket > r.f and bucket <= r.t) as v
    from unnest($${v}::integer[], $${v + 1}::bytea[], $${v + 2}::text[], $${v + 3}::integer[], $${v + 4}::integer[]) with ordinality r(i, k, s, f, t, j) where r.i = e.i) q) as velocity
from (values ${rows.join(',\n  ')})
  e(a, minute, hour, since24h, since30d, ip, email, identity, device, usr, country, p_ip, p_email, p_device, p_user_devices, p_user_countries, i)
left join lateral (select * from history_keys where account_id = e.a and key = e.usr limit 1) u on true
order by e.i
`;
}

/**
 * The distinct members of a set in its window (`since`), exact up to SET_KEEP (past that the count
 * only says "at least"): the store's most recent SET_KEEP, with this replica's pending ones
 * (`pending`: comma-separated hex, deduplicated by the union), or SET_KEEP without a look when this
 * replica alone holds SET_KEEP of them (`pending` null). An account farm's address, SET_KEEP
 * members in the store and as many pending, made a hash of some 200 rows for every read
 * (auto_explain, statements of 64: 0.19 of the read's 0.49 ms an evaluation).
 */
function setCount(key: string, kind: string, since: string, pending: string): string {
  return `(select case when ${pending} is null then ${SET_KEEP} else (select count(*) from (select m.member from (
      select member from history_members where account_id = e.a and key = ${key} and kind = '${kind}' and last_seen >= ${since} order by last_seen desc limit ${SET_KEEP}) m
    union select decode(h, 'hex') from unnest(string_to_array(${pending}, ',')) h) s) end)`;
}

/** The statement size for this many evaluations: the next power of two. */
const readSize = (evaluations: number) => 2 ** Math.ceil(Math.log2(Math.max(1, evaluations)));
const readTexts = new Map<number, string>();
const readText = (size: number) => {
  let text = readTexts.get(size);
  if (text === undefined) readTexts.set(size, (text = readStatement(size)));
  return text;
};

/** The writer's statements: one transaction per batch, rows in key order. */
const WRITE_COUNTS = `insert into history_counts as h (account_id, key, grain, bucket, shard, n)
  select a, k, g, b, $6::integer, n from unnest($1::text[], $2::bytea[], $3::integer[], $4::integer[], $5::integer[]) u(a, k, g, b, n)
  order by a, k, g, b
  on conflict (account_id, key, grain, bucket, shard) do update set n = h.n + excluded.n`;
const WRITE_MEMBERS = `insert into history_members as h (account_id, key, kind, member, last_seen)
  select a, k, t, m, s from unnest($1::text[], $2::bytea[], $3::text[], $4::bytea[], $5::bigint[]) u(a, k, t, m, s)
  order by a, k, t, m
  on conflict (account_id, key, kind, member) do update set last_seen = greatest(h.last_seen, excluded.last_seen)`;
const WRITE_VELOCITY = `insert into history_velocity as h (account_id, key, series, bucket, shard, n, expires)
  select a, k, s, b, $7::integer, n, e from unnest($1::text[], $2::bytea[], $3::text[], $4::integer[], $5::integer[], $6::integer[]) u(a, k, s, b, n, e)
  order by a, k, s, b
  on conflict (account_id, key, series, bucket, shard) do update set n = h.n + excluded.n, expires = greatest(h.expires, excluded.expires)`;
/**
 * Each touched set back to its most recent SET_KEEP members (rows another replica's batch holds are
 * left for the next). The rows past them are found once per set, then only those are locked, and
 * deleted by their tuple id. As a join of the sets with history_members, the planner scanned the
 * whole table and ran the set's look-up once per member of it (a new-person mix at 11,000 rows:
 * 16–19 ms a batch in EXPLAIN ANALYZE, 28–40 ms mean under load); and `for update` under the
 * offset locked the members kept too (a lock written into each of them, every batch).
 */
const TRIM_SETS = `delete from history_members where ctid = any (array(
  select ctid from history_members where ctid = any (array(
    select old.ctid from (select distinct a, k, t from unnest($1::text[], $2::bytea[], $3::text[]) u(a, k, t)) s,
    lateral (select o.ctid from history_members o where o.account_id = s.a and o.key = s.k and o.kind = s.t
             order by o.last_seen desc offset $4) old))
  for update skip locked))`;
const WRITE_KEYS = `insert into history_keys as h (account_id, key, first_seen, last_seen)
  select a, k, f, l from unnest($1::text[], $2::bytea[], $3::bigint[], $4::bigint[]) u(a, k, f, l)
  order by a, k
  on conflict (account_id, key) do update set first_seen = least(h.first_seen, excluded.first_seen), last_seen = greatest(h.last_seen, excluded.last_seen)`;
const WRITE_USERS = `insert into history_keys as h (account_id, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous)
  select * from unnest($1::text[], $2::bytea[], $3::bigint[], $4::bigint[], $5::text[], $6::real[], $7::real[], $8::real[], $9::bigint[], $10::integer[])
  order by 1, 2
  on conflict (account_id, key) do update set
    first_seen = least(h.first_seen, excluded.first_seen),
    last_seen = greatest(h.last_seen, excluded.last_seen),
    country = case when excluded.last_seen >= h.last_seen then excluded.country else h.country end,
    latitude = case when excluded.last_seen >= h.last_seen then excluded.latitude else h.latitude end,
    longitude = case when excluded.last_seen >= h.last_seen then excluded.longitude else h.longitude end,
    radius_km = case when excluded.last_seen >= h.last_seen then excluded.radius_km else h.radius_km end,
    asn = case when excluded.last_seen >= h.last_seen then excluded.asn else h.asn end,
    anonymous = case when excluded.last_seen >= h.last_seen then excluded.anonymous else h.anonymous end`;

/** One identifier's changes not yet written: counters, set members, first and last seen (and a user's last place). */
interface PendingKey {
  account: string;
  /** The key in hex (as its batch's map has it): what the writer sends. */
  hex: string;
  /** grain * 1e9 + bucket → events. */
  cells: Map<number, number>;
  /** kind → member hex → [member, last seen]. */
  sets: Map<string, Map<string, [Buffer, number]>>;
  firstSeen: number | null;
  lastSeen: number | null;
  user: boolean;
  place: Place | null;
  /** Velocity cells (history/velocity.ts): series + '\u0000' + bucket → cell. */
  velocity: Map<string, { series: string; bucket: number; n: number; expires: number }>;
}

/** An evaluation whose read is waiting to be sent. */
interface WaitingRead {
  event: HistoryEvent;
  /** When it was recorded (performance.now()): its batch's budget runs from then at the latest (Batch.opened). */
  at: number;
  resolve: (prior: Prior) => void;
  reject: (error: unknown) => void;
}

/**
 * A batch of changes: being collected (xid null, not sent), full and waiting for the writer (xid
 * null), or sent and waiting for its commit; or a read statement's own events while it is out
 * (`read`'s `ahead`, see `into`).
 */
export interface Batch {
  keys: Map<string, PendingKey>;
  /**
   * When its first change came (performance.now()), or the recording of an event of it whose read
   * came back later (`joined`), whichever was first, on a batch the writer sends: its budget runs
   * from then (writeAttempts), so an event lands within WRITE_BUDGET_MS of being recorded, however
   * long its batch waited behind others, or is given up.
   */
  opened?: number;
  /** The writing transaction's id, once known: a read whose snapshot shows it finished, its commit sent, has these changes. */
  xid: bigint | null;
  /**
   * Whether the transaction's commit has been sent (and not answered with an error). Until then a
   * snapshot that shows the transaction finished shows it rolled back (visibleIn cannot tell an
   * aborted transaction from a committed one): an attempt that failed, to be sent again.
   */
  committing?: boolean;
  /**
   * On a read statement's own events (`read`): the batch they joined once the statement was back,
   * answered or failed (its xid is theirs); null while it is out. Set for the whole statement: an
   * event of it refused (the pending changes at MAX_PENDING_KEYS) or left without a row is counted by the
   * reads sent while it was out until that batch is written, then by none, as it is not recorded.
   */
  into?: Batch | null;
}

/** Whether a read with this snapshot lacks the batch's changes (see Batch.into), and must add them. Exported for its test. */
export function unseenIn(snapshot: (xid: bigint) => boolean, batch: Batch): boolean {
  const { xid, committing } = batch.into ?? batch;
  return xid === null || committing !== true || !snapshot(xid);
}

const idOf = (account: string, key: Buffer) => `${account}\u0000${key.toString('hex')}`;
const cellOf = (grain: number, bucket: number) => grain * 1e9 + bucket;

type Row = Record<string, number | string | boolean | null>;

/**
 * The server ends a history statement that has run this long (its connections' statement_timeout):
 * five times the evaluation's wait, at least 1 s (1 s at the default 200 ms). Long enough for one
 * that only queued behind a hot identifier's row locks to land (the event counted, though its
 * answer went without history); short enough that under a lock stall the statements the clients
 * gave up on end on the server too, instead of piling up until max_connections.
 */
export function historyStatementTimeoutMs(stepTimeoutMs: number): number {
  return Math.max(1_000, 5 * stepTimeoutMs);
}

/** The client's own limit, past the server's: only for a server or network that does not answer at all. */
const CLIENT_GRACE_MS = 1_000;

/**
 * `pool` for erasure and pruning (batches that may take a while); `recordPool` for the read of
 * every evaluation and the writer's batches, its connections opened with statement_timeout
 * (historyStatementTimeoutMs) and synchronous_commit off.
 */
export function postgresHistory(pool: pg.Pool, recordPool: pg.Pool, options: HistoryMaintenanceOptions & { stepTimeoutMs: number; flushDelayMs?: number; maxPendingKeys?: number; batchKeys?: number; writeBudgetMs?: number }): HistoryStore {
  const queryTimeoutMs = historyStatementTimeoutMs(options.stepTimeoutMs) + CLIENT_GRACE_MS;
  const flushDelayMs = options.flushDelayMs ?? FLUSH_DELAY_MS;
  const maxPendingKeys = options.maxPendingKeys ?? MAX_PENDING_KEYS;
  const batchKeys = options.batchKeys ?? BATCH_KEYS;
  const writeBudgetMs = options.writeBudgetMs ?? WRITE_BUDGET_MS;
  const maintenance = postgresMaintenance(pool, options, () => closed);
  /** This replica's counter rows (SHARDS). */
  const shard = Math.floor(Math.random() * SHARDS);
  let failed = 0;
  let refused = 0;
  let collecting: Batch = { keys: new Map(), xid: null };
  /** Batches full (batchKeys), oldest first, waiting for the writer. */
  let full: Batch[] = [];
  /** Sent, not yet committed (or failed): at most one at a time. */
  let sent: Batch | null = null;
  let flushing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** Closed, and its last flush done: an event after it is refused (counted), not left unwritten. */
  let drained = false;
  let written = 0;
  let analyzed = false;
  /** Evaluations whose read is not yet sent; read statements in flight. */
  const waiting: WaitingRead[] = [];
  let reading = 0;
  let readsSent = 0;
  /** Read statements not yet answered, for close() (their evaluations join the batch once back). */
  const statements = new Set<Promise<void>>();
  /** The prune running, if one is: one at a time, and close() waits for it (it uses the store's pool, ended after). */
  let pruning: Promise<number> | null = null;

  /** A full batch being collected closed, and the next begun: called before an event (or a read statement's events) joins it. */
  const collectInto = (): Batch => {
    if (collecting.keys.size > 0 && collecting.keys.size >= batchKeys) {
      full.push(collecting);
      collecting = { keys: new Map(), xid: null };
    }
    return collecting;
  };
  const pendingOf = (account: string, key: Buffer, user = false, batch = collecting): PendingKey => {
    const hex = key.toString('hex');
    const id = `${account}\u0000${hex}`;
    let p = batch.keys.get(id);
    if (p === undefined) {
      p = { account, hex, cells: new Map(), sets: new Map(), firstSeen: null, lastSeen: null, user, place: null, velocity: new Map() };
      if (batch.keys.size === 0) batch.opened = performance.now();
      batch.keys.set(id, p);
    }
    return p;
  };
  const count = (p: PendingKey, grain: number, bucket: number) => {
    const c = cellOf(grain, bucket);
    p.cells.set(c, (p.cells.get(c) ?? 0) + 1);
  };
  const touch = (p: PendingKey, kind: string, member: Buffer, at: number) => {
    let set = p.sets.get(kind);
    if (set === undefined) p.sets.set(kind, (set = new Map()));
    const hex = member.toString('hex');
    const before = set.get(hex);
    set.set(hex, [member, Math.max(before?.[1] ?? at, at)]);
  };
  const seenAt = (p: PendingKey, at: number, place: Place | null) => {
    p.firstSeen = p.firstSeen === null ? at : Math.min(p.firstSeen, at);
    if (p.lastSeen === null || at >= p.lastSeen) {
      p.lastSeen = at;
      if (p.user) p.place = place;
    }
  };

  /**
   * A read's event, into the batch being collected once its statement is back: that batch's budget
   * runs from when the event was recorded, if that came first (a read may wait, and be out, for a
   * while), so the event lands within WRITE_BUDGET_MS of it.
   */
  const joined = (r: WaitingRead) => {
    add(r.event);
    collecting.opened = Math.min(collecting.opened ?? r.at, r.at);
  };
  /** The event's changes, into the batch being collected (or a read statement's own: `read`). */
  const add = (event: HistoryEvent, batch = collecting) => {
    const { account } = event;
    const ip = pendingOf(account, event.ip, false, batch);
    count(ip, GRAIN_MINUTE, event.minute);
    count(ip, GRAIN_HOUR, event.hour);
    touch(ip, SET_ACCOUNTS, event.identity, event.at);
    const email = pendingOf(account, event.email, false, batch);
    count(email, GRAIN_HOUR, event.hour);
    seenAt(email, event.at, null);
    if (event.device !== null) {
      const device = pendingOf(account, event.device, false, batch);
      count(device, GRAIN_MINUTE, event.minute);
      touch(device, SET_ACCOUNTS, event.identity, event.at);
      seenAt(device, event.at, null);
      touch(email, SET_DEVICES, event.device, event.at);
    }
    if (event.user !== null) {
      const user = pendingOf(account, event.user, true, batch);
      user.user = true;
      if (event.device !== null) touch(user, SET_DEVICES, event.device, event.at);
      if (event.country !== null) touch(user, SET_COUNTRIES, event.country, event.at);
      seenAt(user, event.at, event.place);
    }
    for (const c of event.velocity?.counts ?? []) {
      const p = pendingOf(account, c.key, false, batch);
      const id = `${c.series}\u0000${c.bucket}`;
      const cell = p.velocity.get(id);
      if (cell === undefined) p.velocity.set(id, { series: c.series, bucket: c.bucket, n: 1, expires: c.expires });
      else cell.n += 1;
    }
  };

  const schedule = () => {
    if (timer !== undefined || flushing !== null || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, flushDelayMs);
    timer.unref();
  };

  /** The batch's statements and their parameters, made once for all its attempts. */
  const statementsOf = (batch: Batch): pg.QueryConfig[] => {
    // Keys, members, numbers, account ids, kinds and series as array literals (arrayLiteral,
    // textLiteral); the user's place as arrays, which pg's client escapes element by element.
    const c: unknown[][] = [[], [], [], [], []];
    const m: unknown[][] = [[], [], [], [], []];
    const k: unknown[][] = [[], [], [], []];
    const u: unknown[][] = [[], [], [], [], [], [], [], [], [], []];
    const v: unknown[][] = [[], [], [], [], [], []];
    for (const p of batch.keys.values()) {
      const key = p.hex;
      for (const cell of p.velocity.values()) {
        v[0]!.push(p.account); v[1]!.push(key); v[2]!.push(cell.series); v[3]!.push(cell.bucket); v[4]!.push(cell.n); v[5]!.push(cell.expires);
      }
      for (const [cell, n] of p.cells) {
        const grain = cell >= 2e9 ? GRAIN_HOUR : GRAIN_MINUTE;
        c[0]!.push(p.account); c[1]!.push(key); c[2]!.push(grain); c[3]!.push(cell - grain * 1e9); c[4]!.push(n);
      }
      for (const [kind, set] of p.sets) {
        for (const [member, [, seen]] of set) {
          m[0]!.push(p.account); m[1]!.push(key); m[2]!.push(kind); m[3]!.push(member); m[4]!.push(seen);
        }
      }
      if (p.firstSeen === null || p.lastSeen === null) continue;
      if (p.user) {
        const q = p.place;
        u[0]!.push(p.account); u[1]!.push(key); u[2]!.push(p.firstSeen); u[3]!.push(p.lastSeen); u[4]!.push(q?.country ?? null);
        u[5]!.push(q?.latitude ?? null); u[6]!.push(q?.longitude ?? null); u[7]!.push(q?.radiusKm ?? null); u[8]!.push(q?.asn ?? null); u[9]!.push(flag(q?.anonymous ?? null));
      } else {
        k[0]!.push(p.account); k[1]!.push(key); k[2]!.push(p.firstSeen); k[3]!.push(p.lastSeen);
      }
    }
    const hexes = (column: unknown[]) => arrayLiteral(column as string[], true);
    const numbers = (column: unknown[]) => arrayLiteral(column as number[], false);
    const texts = (column: unknown[]) => textLiteral(column as string[]);
    const statements: pg.QueryConfig[] = [];
    if (c[0]!.length > 0) {
      statements.push({ name: 'history_write_counts', text: WRITE_COUNTS, values: [texts(c[0]!), hexes(c[1]!), numbers(c[2]!), numbers(c[3]!), numbers(c[4]!), shard] });
    }
    if (v[0]!.length > 0) {
      statements.push({ name: 'history_write_velocity', text: WRITE_VELOCITY, values: [texts(v[0]!), hexes(v[1]!), texts(v[2]!), numbers(v[3]!), numbers(v[4]!), numbers(v[5]!), shard] });
    }
    if (m[0]!.length > 0) {
      const [accounts, keys, kinds] = [texts(m[0]!), hexes(m[1]!), texts(m[2]!)];
      statements.push({ name: 'history_write_members', text: WRITE_MEMBERS, values: [accounts, keys, kinds, hexes(m[3]!), numbers(m[4]!)] });
      statements.push({ name: 'history_trim_sets', text: TRIM_SETS, values: [accounts, keys, kinds, SET_KEEP] });
    }
    if (k[0]!.length > 0) statements.push({ name: 'history_write_keys', text: WRITE_KEYS, values: [texts(k[0]!), hexes(k[1]!), numbers(k[2]!), numbers(k[3]!)] });
    if (u[0]!.length > 0) statements.push({ name: 'history_write_users', text: WRITE_USERS, values: [texts(u[0]!), hexes(u[1]!), numbers(u[2]!), numbers(u[3]!), ...u.slice(4)] });
    return statements;
  };

  /** One attempt at the batch, within its budget (`until`, performance.now()); throws WriteFailed (or the connect's error). */
  const writeBatch = async (batch: Batch, statements: readonly pg.QueryConfig[], until: number) => {
    const client = await recordPool.connect();
    const left = until - performance.now();
    if (left < MIN_ATTEMPT_MS) {
      client.release();
      throw new WriteFailed(new Error('the batch had no time left once connected'), false);
    }
    // Each statement may run for what is left (statement_timeout); several in a row could outlast
    // it, so at the budget's end the statement running is cancelled on the server, and the client
    // stops waiting a grace later (a server that does not answer at all; the connection is then
    // destroyed, its rollback, given a grace of its own, failing too). The connection goes back to the pool only once a
    // cancel sent has been answered: it must not reach a read that took the connection since.
    let cancelling: Promise<unknown> | undefined;
    const pid = (client as unknown as { processID: number | null }).processID;
    const deadline = setTimeout(() => {
      cancelling = pool.query('select pg_cancel_backend($1)', [pid]).catch(() => undefined);
    }, left);
    const timed = (config: pg.QueryConfig) => ({ ...config, query_timeout: left + CLIENT_GRACE_MS }) as pg.QueryConfig;
    // No statement, and no commit, is sent once the budget is over: a statement that ended just
    // after the cancel missed it, or began just before, must not carry the batch past it.
    const inTime = () => {
      if (performance.now() >= until) throw new Error('the batch\'s time ran out between its statements');
    };
    let broken: Error | undefined;
    try {
      // This transaction's commit does not wait for the disk (see above); the session's other work does.
      const begun = (await client.query(timed({ text: beginWrite(left) }))) as unknown as Array<pg.QueryResult<{ xid: string }>>;
      batch.xid = BigInt(begun[begun.length - 1]!.rows[0]!.xid);
      for (const statement of statements) {
        inTime();
        await client.query(timed(statement));
      }
      inTime();
      batch.committing = true;
      await client.query(timed({ text: 'commit' }));
    } catch (error) {
      // The server answered the commit with an error: not committed. No answer: it may have been,
      // and the reads keep taking the snapshot's word for it. (A read answered between a commit
      // the server refused and this line takes the batch as written: a window of one round trip,
      // on a refusal this writer's statements do not provoke.)
      const mayHaveCommitted = batch.committing === true && typeof (error as { severity?: unknown }).severity !== 'string';
      if (!mayHaveCommitted) batch.committing = false;
      // A connection that cannot roll back is not given back to the pool for the next batch.
      broken = await client.query({ text: 'rollback', query_timeout: CLIENT_GRACE_MS } as pg.QueryConfig).then(() => undefined, (e: unknown) => e as Error);
      throw new WriteFailed(error, mayHaveCommitted);
    } finally {
      clearTimeout(deadline);
      await cancelling;
      client.release(broken);
    }
    written += batch.keys.size;
    if (!analyzed && written >= ANALYZE_AFTER_KEYS) {
      analyzed = true;
      // A role that does not own the tables gets a warning and no statistics: autovacuum's ANALYZE
      // comes later, as before. An error (the store down) is left to the next write's report.
      void analyzeNeverAnalyzed(pool).catch(() => undefined);
    }
  };

  /** Ends the pause between a batch's attempts early (close: a shutdown waits for no pause). */
  let wake: () => void = () => undefined;
  /**
   * The batch written, or given up once its budget (writeBudgetMs, from its first change:
   * Batch.opened) has no room for another attempt: `expired` when none was made, `failed` after
   * one (both counted `failed`); never throws. Not sent again when its commit may have been
   * committed (never counted twice). On close a pause ends at once for one last attempt, and a
   * failed one is not sent again.
   */
  const writeAttempts = async (batch: Batch): Promise<'written' | 'expired' | 'failed'> => {
    const until = (batch.opened ?? performance.now()) + writeBudgetMs;
    if (performance.now() + MIN_ATTEMPT_MS > until) {
      // It waited out its budget behind the batches before it (the server slow, or down a while).
      failed += batch.keys.size;
      return 'expired';
    }
    const statements = statementsOf(batch);
    for (let pause = RETRY_PAUSE_MS; ; pause *= 2) {
      try {
        await writeBatch(batch, statements, until);
        return 'written';
      } catch (error) {
        const { mayHaveCommitted } = error as Partial<WriteFailed>;
        if (mayHaveCommitted === true || closed || performance.now() + pause + MIN_ATTEMPT_MS > until) {
          failed += batch.keys.size;
          return 'failed';
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = () => undefined;
    }
  };

  /**
   * Writes what is pending when it begins, no more: the changes that come meanwhile wait for the
   * next (schedule), so a flush ends under steady traffic, and so do erase and prune, which wait
   * for one. (It used to go on while anything was pending: under steady traffic, for ever.)
   */
  function flush(): Promise<void> {
    flushing ??= (async () => {
      if (collecting.keys.size > 0) {
        full.push(collecting);
        collecting = { keys: new Map(), xid: null };
      }
      for (let n = full.length; n > 0 && full.length > 0; n--) {
        const batch = full.shift()!;
        sent = batch;
        let outcome: Awaited<ReturnType<typeof writeAttempts>>;
        try {
          // Given up after its budget (the server may stay down for long): counted, and the store reported down by its probe.
          outcome = await writeAttempts(batch);
        } finally {
          sent = null;
        }
        if (outcome === 'failed' && closed) {
          // Closing, and the server did not take this one: the batches after it are given up at
          // once, not each after an attempt of its own (a shutdown waits for one, not for all).
          for (const b of full) failed += b.keys.size;
          failed += collecting.keys.size;
          full = [];
          collecting = { keys: new Map(), xid: null };
        }
      }
    })().finally(() => {
      flushing = null;
      if (full.length > 0 || collecting.keys.size > 0) schedule();
    });
    return flushing;
  }

  /** Identifiers waiting to be written: every batch not yet written. */
  const pendingKeys = () => {
    let n = collecting.keys.size + (sent?.keys.size ?? 0);
    for (const b of full) n += b.keys.size;
    return n;
  };
  /** Whether the pending changes have room for another event's (MAX_PENDING_KEYS); none once closed and drained (close). */
  const room = () => !drained && pendingKeys() < maxPendingKeys;

  /** The events of the read statements in flight, each statement's own batch (see Batch.into). */
  const inFlight = new Set<Batch>();
  /**
   * What this replica has recorded and a read sent now may not show: the batch sent (unless the
   * read's snapshot shows its transaction committed), the full ones waiting, the one being
   * collected, and the events of the read statements in flight (not in any batch until their
   * statement is back).
   */
  const unwritten = (): Batch[] => {
    // Oldest first, as the writer lands them: of two equal last-seen times, the later batch's place wins in both.
    const batches = sent === null ? [...full, collecting] : [sent, ...full, collecting];
    for (const b of inFlight) batches.push(b);
    return batches;
  };

  /**
   * The reads waiting (their evaluations' records) go in one statement, READ_BATCH at most, with
   * at most `READS_IN_FLIGHT` statements in flight: at a few evaluations at once each read goes at
   * once, alone; past that, the evaluations that arrive while statements are in flight go together
   * in the next, and share its round trip, its protocol messages and the executor's set-up (a
   * statement of some twenty subqueries). `waiting` holds no more than the recorder lets in flight
   * (HistoryStore.inFlight). Reads are serial in the order they are sent: each sees every event this
   * replica sent for reading before it, those of the statements in flight and those before it in its
   * own (the statement's batch, `ahead`, grown read by read), though none of them is written yet;
   * so a read misses none of this replica's events, however many of one address are in flight.
   */
  const read = () => {
    const reads = waiting.splice(0, READ_BATCH);
    reading += 1;
    readsSent += reads.length;
    // What the read cannot show is taken when it is sent (see `unwritten`): the event itself joins `ahead`
    // as it is put in the statement, and the batch being collected once read.
    const ahead: Batch = { keys: new Map(), xid: null, into: null };
    const others = unwritten();
    const batches = [...others, ahead];
    let pending: ReturnType<typeof pendingMembers> | null = pendingMembers(others, ahead);
    const overlays: Overlay[][] = [];
    let query: Promise<pg.QueryResult<Row>>;
    try {
      const size = readSize(reads.length);
      const values: unknown[] = [];
      const velocity: unknown[][] = [[], [], [], [], []];
      reads.forEach((r, i) => {
        const ids = idsOf(r.event);
        overlays.push(batches.map((b) => overlayOf(b, r.event, ids)));
        readRow(values, velocity, r.event, ids, i, pending!);
        add(r.event, ahead);
      });
      // The callbacks below share this scope: what was gathered would live until the statement is back.
      pending = null;
      for (let n = (size - reads.length) * READ_TYPES.length; n > 0; n--) values.push(null);
      values.push(...velocity);
      query = recordPool.query<Row>({ name: `history_read_${size}`, text: readText(size), values, query_timeout: queryTimeoutMs } as pg.QueryConfig);
      inFlight.add(ahead);
    } catch (error) {
      query = Promise.reject(error as Error);
    }
    // The statement's place is free once it answers: before its evaluations go on (their next reads may take it).
    const answered = () => {
      reading -= 1;
      readsSent -= reads.length;
      inFlight.delete(ahead);
    };
    const answer = (result: pg.QueryResult<Row>) => {
      const snapshot = result.rows.length > 0 ? visibleIn(String(result.rows[0]!.snapshot)) : () => false;
      // Its events join the batch being collected, here and now: the reads still out that counted
      // them as in flight drop them once their snapshot shows that batch written (Batch.into).
      ahead.into = collectInto();
      reads.forEach((r, i) => {
        const row = result.rows[i];
        if (row === undefined) {
          failed += 1;
          r.reject(new Error(`the history read answered ${result.rows.length} rows for ${reads.length} evaluations`));
          return;
        }
        // Recorded once read, not when the read is sent: a read that waited for a pooled connection
        // could otherwise run after its own event's batch was written, and count the event twice.
        if (room()) {
          joined(r);
          schedule();
        } else {
          refused += 1;
        }
        r.resolve(withUnwritten(priorOf(row, r.event), overlays[i]!.filter((o) => unseenIn(snapshot, o.batch))));
      });
    };
    const statement = query.then(
      (result) => {
        answered();
        try {
          answer(result);
        } catch (error) {
          // Not expected (a row the code cannot read): the evaluations not yet answered fail, none is left waiting.
          for (const r of reads) r.reject(error); // a settled promise ignores it
        }
      },
      (error: unknown) => {
        answered();
        for (const r of reads) r.reject(error);
        // Recorded all the same, as an answer that came too late is (a statement the server
        // cancelled, a connection lost): the reads still out counted them in flight, and count them
        // on as that batch's (Batch.into). Written once the store takes writes again, or lost then.
        ahead.into = collectInto();
        for (const r of reads) {
          if (!room()) {
            refused += 1;
            continue;
          }
          try {
            joined(r);
          } catch {
            failed += 1; // not expected (an event the statement could not be made of): not recorded
          }
        }
        schedule();
      },
    ).finally(() => {
      statements.delete(statement);
      if (waiting.length > 0 && reading < READS_IN_FLIGHT) read();
    });
    statements.add(statement);
  };

  return {
    inFlight: { total: HISTORY_IN_FLIGHT, perKey: KEY_IN_FLIGHT },
    record(event: HistoryEvent): Promise<Prior> {
      return new Promise<Prior>((resolve, reject) => {
        waiting.push({ event, at: performance.now(), resolve, reject });
        if (reading < READS_IN_FLIGHT) read();
      });
    },
    countAfter(account, counts) {
      if (counts.length === 0) return;
      if (!room()) {
        refused += 1;
        return;
      }
      // As `add` counts the event's own: into the batch being collected (reads overlay it at once).
      const batch = collectInto();
      for (const c of counts) {
        const p = pendingOf(account, c.key, false, batch);
        const id = `${c.series}\u0000${c.bucket}`;
        const cell = p.velocity.get(id);
        if (cell === undefined) p.velocity.set(id, { series: c.series, bucket: c.bucket, n: 1, expires: c.expires });
        else cell.n += 1;
      }
      schedule();
    },
    // An evaluation answered from the recorder's local counts (its key past its reads in flight):
    // recorded all the same, without a read of its own to wait for.
    remember(event: HistoryEvent) {
      if (room()) {
        add(event, collectInto());
        schedule();
        return true;
      }
      refused += 1;
      return false;
    },
    async erase(account, keys) {
      // What is pending goes first, so the erasure takes it too: the events of the reads out (their
      // statements end within their limit), then a flush under way, which may have begun before
      // some of it, and one more for the rest.
      await Promise.all([...statements]);
      await flushing;
      await flush();
      return maintenance.erase(account, keys);
    },
    prune() {
      pruning ??= (async () => {
        await flushing;
        await flush();
        return maintenance.prune();
      })().finally(() => {
        pruning = null;
      });
      return pruning;
    },
    stats: () => ({ failed, refused, pruned: maintenance.pruned(), pending: pendingKeys(), reading: waiting.length + readsSent }),
    async close() {
      closed = true;
      clearTimeout(timer);
      wake();
      // The reads out (and those waiting, sent as each answers) first: their events go in the last flush.
      while (statements.size > 0) await Promise.all(statements);
      await flushing;
      // Until nothing is left: an evaluation answered meanwhile may still add its event.
      while (full.length > 0 || collecting.keys.size > 0) await flush();
      drained = true;
      await pruning?.catch(() => undefined);
      await recordPool.end();
    },
  };
}

/**
 * ANALYZE of the history tables PostgreSQL has never analyzed (see ANALYZE_AFTER_KEYS); none when
 * autovacuum has. "Never" as the statistics collector says: after a reset of its counters (a crash,
 * a failover, `pg_stat_reset()`) a grown store is analyzed once more, a bounded sample per table.
 */
async function analyzeNeverAnalyzed(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ relname: string }>({
    text: 'select relname from pg_stat_user_tables where relname = any($1) and schemaname = current_schema() and last_analyze is null and last_autoanalyze is null',
    values: [HISTORY_TABLES],
  });
  const tables = HISTORY_TABLES.filter((table) => rows.some((r) => r.relname === table));
  if (tables.length > 0) await pool.query(`analyze ${tables.join(', ')}`);
}

/** A batch not written: `mayHaveCommitted` when its commit was sent and no answer came back. */
class WriteFailed extends Error {
  constructor(readonly error: unknown, readonly mayHaveCommitted: boolean) {
    super((error as Error)?.message ?? String(error));
  }
}

/** Whether a transaction has finished in a snapshot (`pg_current_snapshot()` as text, xmin:xmax:xip,…): committed or rolled back, it cannot tell (unseenIn can). Exported for its test. */
export function visibleIn(snapshot: string): (xid: bigint) => boolean {
  const [xmin, xmax, xip] = snapshot.split(':');
  const running = new Set((xip ?? '').split(',').filter(Boolean));
  const lo = BigInt(xmin!);
  const hi = BigInt(xmax!);
  return (xid) => xid < lo || (xid < hi && !running.has(xid.toString()));
}

/** What one unwritten batch adds to an evaluation's read, taken when the read is sent (the event itself joins a batch once read). */
interface Overlay {
  batch: Batch;
  ipMinutes: number;
  ipHours: number;
  emailHours: number;
  deviceMinutes: number;
  /** Last seen of the event's member in each set: ip accounts, email devices, device accounts, user devices, user countries. */
  current: Array<number | null>;
  /** Each velocity read's events in the batch. */
  velocity: number[];
  /** First seen of the e-mail, the device, the user. */
  first: Array<number | null>;
  user: { lastSeen: number | null; place: Place | null; devices: boolean; countries: boolean } | null;
}

/** An event's identifiers as the batches key them (idOf), and its members in hex (as the sets key them): made once a read. */
interface EventIds {
  ip: string;
  email: string;
  device: string | null;
  user: string | null;
  identity: string;
  deviceMember: string | null;
  country: string | null;
  /** Each velocity read's key. */
  velocity: Array<string | null>;
}

function idsOf(event: HistoryEvent): EventIds {
  const hex = (key: Buffer | null) => (key === null ? null : key.toString('hex'));
  const id = (key: Buffer | null) => (key === null ? null : idOf(event.account, key));
  return {
    ip: idOf(event.account, event.ip), email: idOf(event.account, event.email), device: id(event.device), user: id(event.user),
    identity: event.identity.toString('hex'), deviceMember: hex(event.device), country: hex(event.country),
    velocity: (event.velocity?.reads ?? []).map((read) => id(read.key)),
  };
}

function overlayOf(batch: Batch, event: HistoryEvent, ids: EventIds): Overlay {
  const get = (id: string | null) => (id === null ? undefined : batch.keys.get(id));
  const sum = (p: PendingKey | undefined, grain: number, from: number, to: number) => {
    let total = 0;
    if (p !== undefined) {
      for (const [cell, n] of p.cells) {
        const bucket = cell - grain * 1e9;
        if (bucket > from && bucket <= to) total += n;
      }
    }
    return total;
  };
  const seen = (p: PendingKey | undefined, kind: string, member: string | null) => (member === null ? null : (p?.sets.get(kind)?.get(member)?.[1] ?? null));
  const ip = get(ids.ip);
  const email = get(ids.email);
  const device = get(ids.device);
  const user = get(ids.user);
  const minuteFrom = event.minute - MINUTES_IN_WINDOW;
  const hourFrom = event.hour - HOURS_IN_WINDOW;
  return {
    batch,
    ipMinutes: sum(ip, GRAIN_MINUTE, minuteFrom, event.minute),
    ipHours: sum(ip, GRAIN_HOUR, hourFrom, event.hour),
    emailHours: sum(email, GRAIN_HOUR, hourFrom, event.hour),
    deviceMinutes: sum(device, GRAIN_MINUTE, minuteFrom, event.minute),
    velocity: (event.velocity?.reads ?? []).map((read, i) => {
      let total = 0;
      for (const cell of get(ids.velocity[i] ?? null)?.velocity.values() ?? []) {
        if (cell.series === read.series && cell.bucket > read.from && cell.bucket <= read.to) total += cell.n;
      }
      return total;
    }),
    current: [
      seen(ip, SET_ACCOUNTS, ids.identity), seen(email, SET_DEVICES, ids.deviceMember), seen(device, SET_ACCOUNTS, ids.identity),
      seen(user, SET_DEVICES, ids.deviceMember), seen(user, SET_COUNTRIES, ids.country),
    ],
    first: [email?.firstSeen ?? null, device?.firstSeen ?? null, user?.firstSeen ?? null],
    user: user === undefined ? null : {
      lastSeen: user.lastSeen, place: user.place,
      devices: (user.sets.get(SET_DEVICES)?.size ?? 0) > 0, countries: (user.sets.get(SET_COUNTRIES)?.size ?? 0) > 0,
    },
  };
}

/**
 * The read plus what this replica recorded that it does not show. Set counts already include the
 * pending members (the statement's union); here their `current`, the counters, first and last seen.
 */
function withUnwritten(prior: Prior, overlays: Overlay[]): Prior {
  const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
  const earlier = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  for (const o of overlays) {
    o.velocity.forEach((n, i) => {
      prior.velocity[i]! += n;
    });
    prior.ip.minutes += o.ipMinutes;
    prior.ip.hours += o.ipHours;
    prior.ip.accounts.current = later(prior.ip.accounts.current, o.current[0]!);
    prior.email.hours += o.emailHours;
    prior.email.firstSeen = earlier(prior.email.firstSeen, o.first[0]!);
    prior.email.devices.current = later(prior.email.devices.current, o.current[1]!);
    if (prior.device !== null) {
      prior.device.minutes += o.deviceMinutes;
      prior.device.firstSeen = earlier(prior.device.firstSeen, o.first[1]!);
      prior.device.accounts.current = later(prior.device.accounts.current, o.current[2]!);
    }
    if (prior.user !== null && o.user !== null) {
      const u = prior.user;
      u.firstSeen = earlier(u.firstSeen, o.first[2]!);
      if (o.user.lastSeen !== null && (u.lastSeen === null || o.user.lastSeen >= u.lastSeen)) {
        u.lastSeen = o.user.lastSeen;
        u.place = o.user.place;
      }
      u.baseline.devices ||= o.user.devices;
      u.baseline.countries ||= o.user.countries;
      u.devices.current = later(u.devices.current, o.current[3]!);
      u.countries.current = later(u.countries.current, o.current[4]!);
    }
  }
  return prior;
}

/** A boolean that may be unknown, as the nullable integer column holds it. */
const flag = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);
const n = (value: Row[string] | undefined): number => (value === null || value === undefined ? 0 : Number(value));
const seen = (value: Row[string] | undefined): number | null => (value === null || value === undefined ? null : Number(value));

function priorOf(r: Row, event: HistoryEvent): Prior {
  return {
    ip: { minutes: n(r.ip_minutes), hours: n(r.ip_hours), accounts: { count: n(r.ip_accounts), current: seen(r.ip_accounts_current) } },
    email: { hours: n(r.email_hours), firstSeen: seen(r.email_first_seen), devices: { count: n(r.email_devices), current: seen(r.email_devices_current) } },
    device: event.device === null ? null : {
      minutes: n(r.device_minutes),
      firstSeen: seen(r.device_first_seen),
      accounts: { count: n(r.device_accounts), current: seen(r.device_accounts_current) },
    },
    user: event.user === null ? null : {
      firstSeen: seen(r.user_first_seen),
      lastSeen: seen(r.user_last_seen),
      place: r.user_last_seen === null ? null : {
        country: r.user_country as string | null,
        latitude: seen(r.user_latitude),
        longitude: seen(r.user_longitude),
        radiusKm: seen(r.user_radius_km),
        asn: seen(r.user_asn),
        anonymous: r.user_anonymous === null || r.user_anonymous === undefined ? null : n(r.user_anonymous) === 1,
      },
      devices: { count: n(r.user_devices), current: seen(r.user_devices_current) },
      countries: { count: n(r.user_countries), current: seen(r.user_countries_current) },
      baseline: { devices: r.user_has_devices === true, countries: r.user_has_countries === true },
    },
    velocity: ((r.velocity ?? []) as unknown as Array<string | number>).map(Number),
  };
}

/**
 * The members of an evaluation's set that the batches a read overlays hold and the store may not,
 * for the read's parameters: comma-separated hex (the batches key members by their hex already),
 * each once; null once SET_KEEP distinct ones are found, as the set is then full whatever the
 * store holds (setCount). One of these serves every read of a statement: the batches but the
 * statement's own (`ahead`) do not change while its rows are made (synchronously, in `read`), so
 * their members are gathered once a set; each read adds those of `ahead` before it. An account
 * farm's address has ~100 pending members in those batches: gathered for every read, they were
 * ~23 µs of the main thread an evaluation (bench/profile.ts --postgres, new-person mix). Let go
 * once the rows are made: `read` does not keep it for the statement's round trip.
 */
function pendingMembers(others: readonly Batch[], ahead: Batch): (id: string | null, kind: string) => string | null {
  const gathered = new Map<string, { distinct: ReadonlySet<string>; text: string } | null>();
  const gather = (id: string, kind: string) => {
    let distinct: Set<string> | null = null;
    for (const b of others) {
      for (const hex of b.keys.get(id)?.sets.get(kind)?.keys() ?? []) {
        (distinct ??= new Set()).add(hex);
        if (distinct.size >= SET_KEEP) return null;
      }
    }
    // Most sets (a new person's) are in no batch: one shared empty answer, nothing allocated.
    return distinct === null ? NO_MEMBERS : { distinct, text: [...distinct].join(',') };
  };
  return (id, kind) => {
    if (id === null) return '';
    const at = `${kind}${id}`;
    let known = gathered.get(at);
    if (known === undefined) gathered.set(at, (known = gather(id, kind)));
    if (known === null) return null;
    const own = ahead.keys.get(id)?.sets.get(kind);
    if (own === undefined) return known.text;
    let size = known.distinct.size;
    let text = known.text;
    for (const hex of own.keys()) {
      if (known.distinct.has(hex)) continue;
      size += 1;
      if (size >= SET_KEEP) return null;
      text = text === '' ? hex : `${text},${hex}`;
    }
    return text;
  };
}

const NO_MEMBERS = { distinct: new Set<string>() as ReadonlySet<string>, text: '' };

/**
 * One evaluation's row of the read's parameters (READ_TYPES; `i`: its position from 0), with the
 * pending members of its sets (pendingMembers); and its velocity reads, appended to the five
 * arrays that follow the rows, each tagged with the evaluation's position (1-based, as the rows count).
 */
function readRow(values: unknown[], velocity: unknown[][], e: HistoryEvent, ids: EventIds, i: number, pending: ReturnType<typeof pendingMembers>): void {
  values.push(
    e.account, e.minute, e.hour, e.since24h, e.since30d, e.ip, e.email, e.identity, e.device, e.user, e.country,
    pending(ids.ip, SET_ACCOUNTS), pending(ids.email, SET_DEVICES), pending(ids.device, SET_ACCOUNTS),
    pending(ids.user, SET_DEVICES), pending(ids.user, SET_COUNTRIES),
  );
  for (const r of e.velocity?.reads ?? []) {
    velocity[0]!.push(i + 1); velocity[1]!.push(r.key); velocity[2]!.push(r.series); velocity[3]!.push(r.from); velocity[4]!.push(r.to);
  }
}

/** The read every evaluation makes and the writer's trim of the sets it touched: their plans are checked (test/store/history-postgres-plans.test.ts). */
export const POSTGRES_HISTORY_STATEMENTS = { read: readStatement, trimSets: TRIM_SETS } as const;
