import { parentPort, workerData } from 'node:worker_threads';
import type { Moved, WorkerJob, WorkerReply } from './worker.js';

/** The worker thread of `inWorker` (worker.ts): runs one job, posts its result back, and ends. */
const { module, name, args } = workerData as WorkerJob;
let reply: WorkerReply;
let transfer: ArrayBuffer[] = [];
try {
  const job = (await import(module) as Record<string, (...args: unknown[]) => Promise<Moved<unknown>>>)[name];
  if (typeof job !== 'function') throw new TypeError(`${module} has no function ${name}`);
  const result = await job(...args);
  reply = { ok: true, value: result.value };
  transfer = result.transfer;
} catch (error) {
  const { name: errorName, message, code } = (error instanceof Error ? error : new Error(String(error))) as NodeJS.ErrnoException;
  reply = { ok: false, error: { name: errorName, message, ...(code === undefined ? {} : { code }) } };
}
parentPort!.postMessage(reply, transfer);
