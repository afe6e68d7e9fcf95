import { parentPort, workerData } from 'node:worker_threads';
import Sqlite from 'better-sqlite3';
import { LOG_COLUMNS, logColumns, type LogRecord } from './log-record.js';

/**
 * The SQLite evaluation-log writer's thread: its own connection, statements prepared once, one
 * transaction per batch. Waiting for the write lock blocks this thread, never the request path.
 */
export type WorkerRequest = { type: 'write'; records: LogRecord[] } | { type: 'prune'; beforeId: string; limit: number } | { type: 'close' };
export type WorkerReply = { ok: true; count: number } | { ok: false; error: string; code: string | null };

const { path, busyTimeoutMs } = workerData as { path: string; busyTimeoutMs: number };
const sqlite = new Sqlite(path, { timeout: busyTimeoutMs });
sqlite.pragma('synchronous = NORMAL');
// Deleting an evaluation (pruning) takes its fired-rule rows with it (migration 6's cascade).
sqlite.pragma('foreign_keys = ON');

const insert = sqlite.prepare(`insert into evaluations (${LOG_COLUMNS.join(', ')}) values (${LOG_COLUMNS.map(() => '?').join(', ')})`);
const insertRule = sqlite.prepare('insert into evaluation_rules (account_id, rule_id, evaluation_id) values (?, ?, ?)');
const insertAll = sqlite.transaction((records: LogRecord[]) => {
  for (const record of records) {
    insert.run(logColumns(record));
    for (const rule of record.fired) insertRule.run(record.account_id, rule, record.id);
  }
});
const prune = sqlite.prepare('delete from evaluations where id in (select id from evaluations where id < ? order by id limit ?)');

parentPort!.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    if (request.type === 'write') {
      insertAll.immediate(request.records);
      reply = { ok: true, count: request.records.length };
    } else if (request.type === 'prune') {
      reply = { ok: true, count: prune.run(request.beforeId, request.limit).changes };
    } else {
      sqlite.close();
      reply = { ok: true, count: 0 };
    }
  } catch (error) {
    reply = { ok: false, error: (error as Error).message, code: (error as { code?: string }).code ?? null };
  }
  parentPort!.postMessage(reply);
});
