import { parentPort, workerData } from 'node:worker_threads';
import Sqlite from 'better-sqlite3';
import { PRUNE_STATEMENTS } from './history-sql.js';
import { packedHistory } from './history-packed.js';
import { hourlyCounts, hourOf, LOG_COLUMNS, logColumns, SQLITE_LOG_ERASE, timeOfId } from './log-record.js';
import { type LogRecord } from '../core/log-record.js';
import { evaluationEvent, SQLITE_QUEUE_EVENT, subscriptions } from './webhook-events.js';
import { decodeHistoryBatch } from './history-batch.js';

/**
 * The SQLite writer thread: its own connection, statements prepared once, one transaction per
 * request. It writes the evaluation log and behaviour history (both off the request path), so the
 * main thread never waits for the write lock. Waiting for it blocks this thread only.
 */
export interface HistoryWrite {
  /** [account, key]: identifiers the file does not hold yet (history-batch.ts's fresh subjects). */
  fresh?: unknown[][];
  /** [account, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous] */
  keys: unknown[][];
  /** [account, key, grain, bucket, n, at]: absolute counts (this process is the only writer); `at` a time within the bucket (pruning's). */
  counts: unknown[][];
  /** [account, key, kind, member, last_seen] */
  members: unknown[][];
  /** [account, key, kind, member]: members a set no longer keeps. */
  evicted: unknown[][];
  /** [account, key, series, bucket, n, expires]: velocity cells, absolute as the counts. */
  velocity: unknown[][];
}

export type WorkerRequest =
  | { type: 'write'; records: LogRecord[] }
  | { type: 'prune'; beforeId: string; limit: number }
  /** A history write-back as one binary batch (history-batch.ts), its ArrayBuffer transferred. */
  | { type: 'history'; batch: Uint8Array }
  /** history_packed's rows with something past `before` (HISTORY_DAYS), `limit` of them: count, what was removed; counts.rows, the rows gone through. */
  | { type: 'history-prune-packed'; before: number; minute: number; hour: number; limit: number }
  /** Velocity cells no window reads, a batch: [the minute now, limit]. */
  | { type: 'history-prune'; statement: 'velocity'; values: unknown[] }
  | { type: 'history-erase'; account: string; keys: Uint8Array[] }
  | { type: 'log-erase'; account: string; userId: string | null; email: string | null }
  | { type: 'close' };
export type WorkerReply = { ok: true; count: number; counts?: Record<string, number> } | { ok: false; error: string; code: string | null };

const { path, busyTimeoutMs } = workerData as { path: string; busyTimeoutMs: number };
const sqlite = new Sqlite(path, { timeout: busyTimeoutMs });
sqlite.pragma('synchronous = NORMAL');
// Deleting an evaluation (pruning) takes its fired-rule rows with it (migration 6's cascade).
sqlite.pragma('foreign_keys = ON');

const insert = sqlite.prepare(`insert into evaluations (${LOG_COLUMNS.join(', ')}) values (${LOG_COLUMNS.map(() => '?').join(', ')})`);
const insertRule = sqlite.prepare('insert into evaluation_rules (account_id, rule_id, evaluation_id) values (?, ?, ?)');
// An evaluation answered `review` opens its review item in the same transaction (migration 11).
const insertReview = sqlite.prepare(`insert into review_items (account_id, evaluation_id, event_type, user_id, email, opened_at, status) values (?, ?, ?, ?, ?, ?, 'open')`);
// Hit rates: the batch's counts added to their hours (migration 13).
const addHour = sqlite.prepare(`insert into evaluation_hours (account_id, event_type, hour, evaluations) values (?, ?, ?, ?)
  on conflict (account_id, event_type, hour) do update set evaluations = evaluations + excluded.evaluations`);
const addRuleHour = sqlite.prepare(`insert into rule_hours (account_id, event_type, hour, rule_id, fired, unknown) values (?, ?, ?, ?, ?, ?)
  on conflict (account_id, event_type, hour, rule_id) do update set fired = fired + excluded.fired, unknown = unknown + excluded.unknown`);
// And its webhook events (review.opened, evaluation.declined) are queued in it too (src/store/webhook-events.ts).
const queueEvent = sqlite.prepare(SQLITE_QUEUE_EVENT);
// Read once per batch, in its transaction: an event is built and queued only when some endpoint
// takes it (bench: building and joining it cost ~20 CPU µs per evaluation with no endpoint at all).
const subscribers = sqlite.prepare('select account_id, events from webhook_endpoints where enabled = 1');
const insertAll = sqlite.transaction((records: LogRecord[]) => {
  const subscribed = subscriptions(subscribers.all() as Array<{ account_id: string; events: string }>);
  for (const record of records) {
    const columns = logColumns(record);
    insert.run(columns);
    for (const rule of record.fired) insertRule.run(record.account_id, rule, record.id);
    if (record.state === 'review') insertReview.run(record.account_id, record.id, record.event_type, record.user_id, columns[4], columns[2]);
    if (subscribed.size === 0 || !subscribed.has(record.account_id)) continue;
    const event = evaluationEvent(record, columns[2] as number);
    if (event !== null && subscribed.get(record.account_id)!.has(event.type)) queueEvent.run(event.type, event.payload, columns[2], columns[2], record.account_id, event.type);
  }
  const hours = hourlyCounts(records);
  for (const row of hours.evaluations) addHour.run(row);
  for (const row of hours.rules) addRuleHour.run(row);
});
// Labels and review items go with their evaluations: their ids sort by time.
const pruneLabels = sqlite.prepare('delete from labels where evaluation_id < ?');
const pruneReviews = sqlite.prepare('delete from review_items where evaluation_id < ?');
const prune = sqlite.prepare('delete from evaluations where id in (select id from evaluations where id < ? order by id limit ?)');
// Hours wholly before the retention go with the log (at most a day's hours per account and event type at a time: small).
const pruneHours = sqlite.prepare('delete from evaluation_hours where hour < ?');
const pruneRuleHours = sqlite.prepare('delete from rule_hours where hour < ?');

// The history in `history_packed` (migration 19): a row an identifier, read, changed and written
// back here (history-packed.ts), so the main thread never waits for the write lock.
const packed = packedHistory(sqlite);
// The rows come decoded from the batch (history-batch.ts), their blobs Buffers already.
const writeHistory = sqlite.transaction((write: HistoryWrite) => packed.write(write));
const prunePacked = sqlite.transaction((before: number, minute: number, hour: number, limit: number) => packed.prune(before, minute, hour, limit));
const pruneHistory = { velocity: sqlite.prepare(PRUNE_STATEMENTS.velocity) };
const eraseHistory = sqlite.transaction((account: string, keys: Uint8Array[]) => packed.erase(account, keys));

const eraseLabels = sqlite.prepare(SQLITE_LOG_ERASE.labels);
const eraseReviews = sqlite.prepare(SQLITE_LOG_ERASE.reviews);
const eraseEvaluations = sqlite.prepare(SQLITE_LOG_ERASE.evaluations);
const eraseLog = sqlite.transaction((account: string, user: string | null, email: string | null) => {
  const person = { account, user, email };
  eraseReviews.run(person);
  return { labels: eraseLabels.run(person).changes, evaluations: eraseEvaluations.run(person).changes };
});

parentPort!.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    switch (request.type) {
      case 'write':
        insertAll.immediate(request.records);
        reply = { ok: true, count: request.records.length };
        break;
      case 'prune':
        pruneLabels.run(request.beforeId);
        pruneReviews.run(request.beforeId);
        pruneHours.run(hourOf(timeOfId(request.beforeId)));
        pruneRuleHours.run(hourOf(timeOfId(request.beforeId)));
        reply = { ok: true, count: prune.run(request.beforeId, request.limit).changes };
        break;
      case 'history':
        reply = { ok: true, count: writeHistory.immediate(decodeHistoryBatch(request.batch)) };
        break;
      case 'history-prune-packed': {
        const { removed, rows } = prunePacked.immediate(request.before, request.minute, request.hour, request.limit);
        reply = { ok: true, count: removed, counts: { rows } };
        break;
      }
      case 'history-prune':
        reply = { ok: true, count: pruneHistory[request.statement].run(...request.values).changes };
        break;
      case 'history-erase': {
        const counts = eraseHistory.immediate(request.account, request.keys);
        reply = { ok: true, count: counts.identifiers + counts.counters + counts.memberships, counts: { ...counts } };
        break;
      }
      case 'log-erase': {
        const counts = eraseLog.immediate(request.account, request.userId, request.email);
        reply = { ok: true, count: counts.evaluations, counts };
        break;
      }
      default:
        sqlite.close();
        reply = { ok: true, count: 0 };
    }
  } catch (error) {
    reply = { ok: false, error: (error as Error).message, code: (error as { code?: string }).code ?? null };
  }
  parentPort!.postMessage(reply);
});
