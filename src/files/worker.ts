import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Reading, checking and building a list is up to a second of work at its cap (half a million
 * lines). It runs in a worker thread, so the event loop serves requests meanwhile; what it builds
 * is typed arrays, moved back to the event loop's thread rather than copied (a transfer takes
 * microseconds whatever the size). Measured against building in slices on the event loop
 * (docs/data.md, "Reloading while serving"): the event loop's thread spends a tenth of the CPU
 * on a load, and the peak RSS is lower, the parse's garbage going with the worker's heap.
 *
 * Bounded: one worker at a time in the process (loads wait their turn), each with a capped heap
 * and a time limit; a worker that throws, runs out of memory, dies or overstays is a refused load
 * with the reason, never a crash; an aborted load (its owner closing) terminates its worker.
 */

/** A job: the export `name` of the module at `module` (a file URL), called with `args` in the worker. */
export interface WorkerJob {
  module: string;
  name: string;
  args: unknown[];
}

/** What a job returns: its value, and the buffers in it to move rather than copy. */
export interface Moved<T> {
  value: T;
  transfer: ArrayBuffer[];
}

/** The buffers under typed arrays, for `Moved.transfer` (each array must have a buffer of its own). */
export function buffers(...arrays: ArrayBufferView[]): ArrayBuffer[] {
  return arrays.map((array) => array.buffer as ArrayBuffer);
}

/** What the worker posts back. */
export type WorkerReply = { ok: true; value: unknown } | { ok: false; error: { name: string; message: string; code?: string } };

/** A load the worker could not finish: it ran out of memory, failed, stopped, or took too long. */
export class WorkerError extends Error {
  override name = 'WorkerError';
}

/**
 * The worker's heap: four times what a list at its cap takes (some 60 MiB). The typed arrays it
 * builds are outside the heap, bounded by the file caps.
 */
export const WORKER_HEAP_MB = 256;

/**
 * A job still running after this long is ended and refused: a read stuck on a dead network mount
 * would otherwise hold up every later load. A list at its cap takes a second or two.
 */
export const WORKER_TIMEOUT_MS = 60_000;

export interface WorkerOptions {
  /** Aborting terminates the worker (or keeps it from starting): the job rejects with the reason. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

// From source (tsx, vitest) the entry is TypeScript and the worker needs tsx's loader too; from
// `dist` it is plain JavaScript.
const SOURCE = extname(fileURLToPath(import.meta.url));
const ENTRY = new URL(`./worker-entry${SOURCE}`, import.meta.url);
const EXEC_ARGV = SOURCE === '.ts' ? ['--import', import.meta.resolve('tsx')] : undefined;

let last: Promise<unknown> = Promise.resolve();

/** Runs `name(...args)` from `module` in a worker thread of its own, after any job already queued. */
export function inWorker<T>(module: string, name: string, args: unknown[], options: WorkerOptions = {}): Promise<T> {
  const job = last.then(() => run<T>({ module, name, args }, options));
  last = job.catch(() => undefined);
  return job;
}

function run<T>(job: WorkerJob, { signal, timeoutMs = WORKER_TIMEOUT_MS }: WorkerOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const worker = new Worker(ENTRY, {
      workerData: job,
      execArgv: EXEC_ARGV,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    const stop = () => void worker.terminate();
    signal?.addEventListener('abort', stop, { once: true });
    let reply: WorkerReply | null = null;
    let failure: Error | null = null;
    const timer = setTimeout(() => {
      failure = new WorkerError(`still building it after ${timeoutMs / 1000} s: stopped`);
      stop();
    }, timeoutMs);
    timer.unref();
    worker.once('message', (message: WorkerReply) => {
      reply = message;
    });
    worker.once('error', (error: NodeJS.ErrnoException) => {
      failure = error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? new WorkerError(`ran out of memory while building it (a load may use ${WORKER_HEAP_MB} MiB)`)
        : new WorkerError(`the worker building it failed: ${error.message}`);
    });
    // Settled on exit, not on the reply: the next job starts once this worker is gone.
    worker.once('exit', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      if (reply?.ok) resolve(reply.value as T);
      else if (reply) reject(Object.assign(new Error(reply.error.message), reply.error));
      else if (signal?.aborted) reject(signal.reason);
      else reject(failure ?? new WorkerError(`the worker building it stopped before it answered (exit code ${code})`));
    });
  });
}
