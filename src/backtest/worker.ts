import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DatabaseUrl } from '../config/store-url.js';
import type { BacktestProgress, BacktestScope } from './backtest.js';
import type { BacktestReport } from './report.js';

/**
 * A backtest off the event loop (issue 16: live evaluation must not feel it): a worker thread of
 * its own, with its own connection to the store (worker-entry.ts), the same pattern as the list
 * loads' workers (src/files/worker.ts) with what a long job needs besides: progress after every
 * page, and cancel. Bounded: the worker's heap is capped (it holds one page and the report), and
 * a backtest still running after BACKTEST_TIMEOUT_MS is stopped and refused. A worker that
 * throws, runs out of memory or dies is a failed backtest with the reason, never a crash.
 */
export interface BacktestJob {
  database: DatabaseUrl;
  scope: BacktestScope;
  /** The candidate rule file's text: parsed and compiled in the worker (a compiled rule set does not cross threads). */
  yaml: string;
  pageSize?: number;
  /** See BacktestOptions.dutyCycle: 1 (the default) works without pausing. */
  dutyCycle?: number;
}

export type BacktestMessage =
  | { kind: 'progress'; progress: BacktestProgress }
  | { kind: 'done'; report: BacktestReport }
  | { kind: 'failed'; error: { name: string; message: string } };

/** A page of evaluations and the report: a few MiB. The cap keeps a bug from taking the process's memory. */
export const BACKTEST_HEAP_MB = 128;
/** A million evaluations replay in well under a minute on SQLite (bench/backtest.ts); a slow PostgreSQL gets ten. */
export const BACKTEST_TIMEOUT_MS = 10 * 60_000;

export class BacktestFailed extends Error {
  override name = 'BacktestFailed';
}

// As in src/files/worker.ts: from source the entry is TypeScript and needs tsx's loader.
const SOURCE = extname(fileURLToPath(import.meta.url));
const ENTRY = new URL(`./worker-entry${SOURCE}`, import.meta.url);
const EXEC_ARGV = SOURCE === '.ts' ? ['--import', import.meta.resolve('tsx')] : undefined;

export interface BacktestRunOptions {
  onProgress?: (progress: BacktestProgress) => void;
  /** Aborting terminates the worker: the backtest rejects with the signal's reason. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

export function runBacktestInWorker(job: BacktestJob, { onProgress, signal, timeoutMs = BACKTEST_TIMEOUT_MS }: BacktestRunOptions = {}): Promise<BacktestReport> {
  return new Promise<BacktestReport>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const worker = new Worker(ENTRY, { workerData: job, execArgv: EXEC_ARGV, resourceLimits: { maxOldGenerationSizeMb: BACKTEST_HEAP_MB } });
    const stop = () => void worker.terminate();
    signal?.addEventListener('abort', stop, { once: true });
    let result: BacktestMessage | null = null;
    let failure: Error | null = null;
    const timer = setTimeout(() => {
      failure = new BacktestFailed(`still running after ${timeoutMs / 60_000} minutes: stopped`);
      stop();
    }, timeoutMs);
    timer.unref();
    worker.on('message', (message: BacktestMessage) => {
      if (message.kind === 'progress') onProgress?.(message.progress);
      else result = message;
    });
    worker.once('error', (error: NodeJS.ErrnoException) => {
      failure = new BacktestFailed(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `ran out of memory (a backtest may use ${BACKTEST_HEAP_MB} MiB)` : `the worker failed: ${error.message}`);
    });
    worker.once('exit', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      const settled = result as BacktestMessage | null;
      if (settled?.kind === 'done') resolve(settled.report);
      else if (settled?.kind === 'failed') reject(Object.assign(new BacktestFailed(settled.error.message), { cause: settled.error.name }));
      else if (signal?.aborted) reject(signal.reason);
      else reject(failure ?? new BacktestFailed(`the worker stopped before it answered (exit code ${code})`));
    });
  });
}
