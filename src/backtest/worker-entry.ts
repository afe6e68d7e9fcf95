import { parentPort, workerData } from 'node:worker_threads';
import type { Engine } from '../store/engine.js';
import { openPostgres } from '../store/postgres.js';
import { openSqlite } from '../store/sqlite.js';
import { candidateRuleSet, runBacktest } from './backtest.js';
import type { BacktestJob, BacktestMessage } from './worker.js';

/**
 * The worker thread of `runBacktestInWorker` (worker.ts): its own connection to the store (read
 * only; the schema is the service's, already migrated), one backtest, its progress and its report
 * posted back, then it ends.
 */
const job = workerData as BacktestJob;
const post = (message: BacktestMessage) => parentPort!.postMessage(message);
let engine: Engine | null = null;
try {
  const candidate = candidateRuleSet(job.scope.eventType, 'candidate', job.yaml);
  const database = job.database;
  engine = database.engine === 'sqlite' ? openSqlite(database) : await openPostgres(database, { onPoolError: () => undefined });
  const report = await runBacktest(engine.db, job.scope, candidate, { pageSize: job.pageSize, onProgress: (progress) => post({ kind: 'progress', progress }) });
  post({ kind: 'done', report });
} catch (error) {
  const { name, message } = error instanceof Error ? error : new Error(String(error));
  post({ kind: 'failed', error: { name, message } });
} finally {
  await engine?.close().catch(() => undefined);
}
