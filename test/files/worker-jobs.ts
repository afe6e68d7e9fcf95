import { writeFileSync } from 'node:fs';
import type { Moved } from '../../src/files/worker.js';

/** Jobs for test/files/worker.test.ts, run in the worker thread as the list loaders' are. */

export async function numbers(count: number): Promise<Moved<Uint32Array>> {
  const words = Uint32Array.from({ length: count }, (_, i) => i);
  return { value: words, transfer: [words.buffer] };
}

export async function refuse(): Promise<never> {
  throw Object.assign(new Error('no such list: /data/x.txt'), { code: 'ENOENT' });
}

export async function exit(): Promise<never> {
  process.exit(3);
}

/** Keeps what it allocates, 128 MiB at a time, until the worker's heap limit ends it. */
export async function exhaust(): Promise<never> {
  const kept: number[][] = [];
  for (;;) kept.push(new Array<number>(1 << 24).fill(0.5));
}

/** Writes `started` (so the test knows it runs), then never answers: ended only by terminating it. */
export function hang(started: string): Promise<never> {
  writeFileSync(started, '');
  setInterval(() => undefined, 60_000);
  return new Promise(() => undefined);
}

/** Busy for `ms` of work (not a sleep): when it ran, on the wall clock shared by every thread. */
export async function busy(ms: number): Promise<Moved<{ from: number; to: number }>> {
  const from = performance.timeOrigin + performance.now();
  while (performance.timeOrigin + performance.now() - from < ms);
  return { value: { from, to: performance.timeOrigin + performance.now() }, transfer: [] };
}
