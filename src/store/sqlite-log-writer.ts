import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { LogErasure, LogWriter } from './engine.js';
import type { LogRecord } from '../core/log-record.js';
import type { WorkerReply, WorkerRequest } from './sqlite-log-worker.js';
import type { DatabaseUrl } from '../config/store-url.js';

/** The worker may wait this long for the write lock (a configuration change, a CLI, a backup). */
const WORKER_BUSY_TIMEOUT_MS = 5_000;

/**
 * The main-thread side of the SQLite writer thread (sqlite-log-worker.ts), which the evaluation log
 * and behaviour history share: one connection writing, requests answered in order. Closed when
 * both users have closed it.
 */
export interface SqliteWriterThread {
  /** `transfer`: ArrayBuffers the message moves to the thread instead of copying (unusable here after). */
  send(request: WorkerRequest, transfer?: ArrayBuffer[]): Promise<WorkerReply & { ok: true }>;
  /** One user is done with the thread; the last one stops it. */
  release(): Promise<void>;
}

/** The thread's answer, or its error as one (with SQLite's code). */
function answered(reply: WorkerReply): WorkerReply & { ok: true } {
  if (!reply.ok) throw Object.assign(new Error(reply.error), { code: reply.code });
  return reply;
}

export async function openSqliteWriterThread(database: DatabaseUrl & { engine: 'sqlite' }, users: number): Promise<SqliteWriterThread> {
  // From source (tests, `npm run dev`) the worker is TypeScript and needs tsx; from dist it is plain JavaScript.
  const fromSource = import.meta.url.endsWith('.ts');
  const worker = new Worker(new URL(fromSource ? './sqlite-log-worker.ts' : './sqlite-log-worker.js', import.meta.url), {
    workerData: { path: database.path, busyTimeoutMs: WORKER_BUSY_TIMEOUT_MS },
    execArgv: fromSource ? ['--import', 'tsx'] : [],
  });
  worker.unref();
  let exited: Error | null = null;
  let remaining = users;
  const waiting: Array<{ resolve: (reply: WorkerReply) => void }> = [];
  worker.on('message', (reply: WorkerReply) => waiting.shift()?.resolve(reply));
  const onEnd = (error: Error) => {
    exited = error;
    for (const w of waiting.splice(0)) w.resolve({ ok: false, error: error.message, code: null });
  };
  worker.on('error', onEnd);
  worker.on('exit', (code) => onEnd(new Error(`the store's writer thread exited (${code})`)));
  await once(worker, 'online');

  // No closure here reads `request`: one that did kept the whole request (a log batch's records,
  // their request and response strings) alive in this call's scope until the thread answered,
  // long enough to be copied into the old generation. Posted before it waits for its answer: a
  // message that cannot be posted takes no place among the replies (they are matched in order).
  const send = (request: WorkerRequest, transfer?: ArrayBuffer[]) => {
    if (exited) return Promise.reject(exited);
    let resolve!: (reply: WorkerReply) => void;
    const promise = new Promise<WorkerReply>((settle) => (resolve = settle));
    try {
      worker.postMessage(request, transfer);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    waiting.push({ resolve });
    return promise.then(answered);
  };
  return {
    send,
    async release() {
      remaining -= 1;
      if (remaining > 0 || exited) return;
      await send({ type: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

export function sqliteLogWriter(thread: SqliteWriterThread): LogWriter {
  return {
    // Not async: the records are cloned into the message at once, and nothing here holds them after.
    // Packed into one transferred buffer instead, as the history's write-back is, they cost the
    // main thread the same (a prototype: 4.4–5.9 against 3.9–5.5 µs a record, batches of 125 and
    // 500, the sending side only): their strings are copied either way.
    write: (records: LogRecord[]) => thread.send({ type: 'write', records }).then(() => undefined),
    prune: async (beforeId, limit) => (await thread.send({ type: 'prune', beforeId, limit })).count,
    erase: async (account, userId, email) => (await thread.send({ type: 'log-erase', account, userId, email })).counts as unknown as LogErasure,
    close: () => thread.release(),
  };
}
