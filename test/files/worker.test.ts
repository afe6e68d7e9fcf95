import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { inWorker, WORKER_HEAP_MB, WORKER_TIMEOUT_MS } from '../../src/files/worker.js';

/**
 * The worker thread the lists are built in (src/files/worker.ts): what it builds comes back, what
 * it throws comes back as the same error, and a worker that dies, runs out of memory, takes too
 * long or is aborted is a rejected load, never a crash. One runs at a time.
 */

const JOBS = new URL('./worker-jobs.ts', import.meta.url).href;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'worker-'));
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

/** Until the `hang` job has written `started`: the worker runs (a real thread, so not on fake time). */
async function untilStarted(started: string): Promise<void> {
  while (!existsSync(started)) await nextTurn();
}

describe('inWorker', () => {
  it('hands back what the job built, typed arrays included', async () => {
    const words = await inWorker<Uint32Array>(JOBS, 'numbers', [100_000]);
    expect(words).toBeInstanceOf(Uint32Array);
    expect(words.length).toBe(100_000);
    expect(words[99_999]).toBe(99_999);
  });

  it('rejects with the error the job threw: its message and code', async () => {
    await expect(inWorker(JOBS, 'refuse', [])).rejects.toMatchObject({ message: 'no such list: /data/x.txt', code: 'ENOENT' });
    await expect(inWorker(JOBS, 'missing', [])).rejects.toThrow(/has no function missing/);
  });

  it('rejects when the worker dies before it answers', async () => {
    await expect(inWorker(JOBS, 'exit', [])).rejects.toMatchObject({
      name: 'WorkerError',
      message: 'the worker building it stopped before it answered (exit code 3)',
    });
  });

  it('rejects when the worker runs out of its heap, and the next job runs', async () => {
    await expect(inWorker(JOBS, 'exhaust', [])).rejects.toMatchObject({
      name: 'WorkerError',
      message: `ran out of memory while building it (a load may use ${WORKER_HEAP_MB} MiB)`,
    });
    await expect(inWorker<Uint32Array>(JOBS, 'numbers', [3])).resolves.toEqual(new Uint32Array([0, 1, 2]));
  });

  it('terminates a running worker when its load is aborted, and frees its turn', async () => {
    const closing = new AbortController();
    const started = join(dir, 'started');
    const hung = inWorker(JOBS, 'hang', [started], { signal: closing.signal });
    const next = inWorker<Uint32Array>(JOBS, 'numbers', [1]);
    await untilStarted(started);
    closing.abort();
    await expect(hung).rejects.toMatchObject({ name: 'AbortError' });
    await expect(next).resolves.toEqual(new Uint32Array([0]));
    // Aborted before its turn: no worker is started at all.
    await expect(inWorker(JOBS, 'hang', [started], { signal: closing.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('ends a job that runs too long, and frees its turn', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const started = join(dir, 'started');
    const hung = inWorker(JOBS, 'hang', [started]);
    const next = inWorker<Uint32Array>(JOBS, 'numbers', [1]);
    await untilStarted(started);
    vi.advanceTimersByTime(WORKER_TIMEOUT_MS);
    await expect(hung).rejects.toMatchObject({ name: 'WorkerError', message: `still building it after ${WORKER_TIMEOUT_MS / 1000} s: stopped` });
    await expect(next).resolves.toEqual(new Uint32Array([0]));
  });

  it('runs one worker at a time: a job starts once the one before it has ended', async () => {
    const runs = await Promise.all([0, 1, 2].map(() => inWorker<{ from: number; to: number }>(JOBS, 'busy', [30])));
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.from).toBeGreaterThanOrEqual(runs[i - 1]!.to);
  });
});
