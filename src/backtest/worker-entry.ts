import { setPriority } from 'node:os';
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
/**
 * The lowest CPU priority, for this thread only: on Linux a thread's nice value is its own
 * (setpriority(2), "per-thread attribute"), so when the cores are busy the event loop's thread,
 * answering live evaluations, goes first and the backtest takes what is left. Elsewhere this may
 * apply to the whole process or be refused: then it is skipped.
 */
if (process.platform === 'linux') {
  try {
    setPriority(0, 19);
  } catch {
    // Not allowed here: the backtest runs at the process's priority.
  }
}
const post = (message: BacktestMessage) => parentPort!.postMessage(message);
let engine: Engine | null = null;
try {
  const candidate = candidateRuleSet(job.scope.eventType, 'candidate', job.yaml);
  const database = job.database;
  engine = database.engine === 'sqlite' ? openSqlite(database) : await openPostgres(database, { onPoolError: () => undefined });
  const report = await runBacktest(engine.db, job.scope, candidate, { pageSize: job.pageSize, dutyCycle: job.dutyCycle, onProgress: (progress) => post({ kind: 'progress', progress }) });
  post({ kind: 'done', report });
} catch (error) {
  const { name, message } = error instanceof Error ? error : new Error(String(error));
  post({ kind: 'failed', error: { name, message } });
} finally {
  await engine?.close().catch(() => undefined);
}
