import type { Logger } from 'pino';
import type { LogErasure, LogWriter } from './engine.js';
import { firstIdAt, recordSize } from './log-record.js';
import { type LogRecord } from '../core/log-record.js';
import { ignoreStoreOperations, observed, type StoreObserver } from './observer.js';

/**
 * The evaluation log's queue: the request path hands a record over and returns at once; a batch
 * writer takes it to the store off the request path. Bounded in entries and bytes: when full, or
 * while the store is unreachable and the queue has filled, a record is dropped and counted, never
 * waited for. A batch the store refused is dropped and counted too: retrying it would hold memory
 * for as long as the store stays down.
 */
export interface EvaluationLogOptions {
  writer: LogWriter | null;
  /** 0 keeps no log: records are not even queued. */
  retentionDays: number;
  logger: Logger;
  /** Whether the store answered its last probe; no batch is sent while it does not. */
  available: () => boolean;
  /** A batch failed: the store is not working, whatever the probe said. */
  onWriteError: (error: Error) => void;
  /** Each batch's and prune step's duration and outcome (metrics). */
  observe?: StoreObserver;
  maxEntries?: number;
  maxBytes?: number;
  batchSize?: number;
  flushDelayMs?: number;
  pruneIntervalMs?: number;
  pruneBatch?: number;
  now?: () => number;
}

export const LOG_DEFAULTS = {
  maxEntries: 20_000,
  maxBytes: 32 * 2 ** 20,
  batchSize: 500,
  flushDelayMs: 50,
  pruneIntervalMs: 60_000,
  pruneBatch: 1_000,
} as const;

export interface EvaluationLogStats {
  enabled: boolean;
  queued: number;
  queued_bytes: number;
  written: number;
  /** Records refused because the queue was full (the store slow or down). */
  dropped: number;
  /** Records in batches the store failed to write. */
  failed: number;
  pruned: number;
}

export interface EvaluationLog {
  /** Hot path: queues the record or counts it dropped. Never throws, never waits. */
  record(record: LogRecord): void;
  stats(): EvaluationLogStats;
  /** Writes what is queued now (tests, shutdown); resolves when done or failed. */
  flush(): Promise<void>;
  /**
   * Whether evaluation `id` is queued or being written by this replica: only then can a look-up
   * that missed it find it after a `flush()`. (An unknown id must not force a write each time.)
   */
  holds(id: string): boolean;
  /** Prunes past retention now, in batches, until nothing is left to prune. */
  prune(): Promise<number>;
  /** The store is back: send what waited. */
  resume(): void;
  /**
   * Deletes a person's evaluations and labels: what is queued is written first, so nothing of
   * theirs answered before this call reaches the store after it. Null when the log keeps nothing.
   */
  erase(account: string, userId: string | null, email: string | null): Promise<LogErasure | null>;
  close(): Promise<void>;
}

export function createEvaluationLog(options: EvaluationLogOptions): EvaluationLog {
  const o = { ...LOG_DEFAULTS, ...options };
  const now = o.now ?? Date.now;
  const observe = o.observe ?? ignoreStoreOperations;
  const enabled = o.writer !== null && o.retentionDays > 0;
  let queue: LogRecord[] = [];
  let bytes = 0;
  const counts = { written: 0, dropped: 0, failed: 0, pruned: 0 };
  let writing: Promise<void> | null = null;
  /** Ids queued or in the batch being written: what `holds` answers from, without scanning the queue. */
  const held = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let pruning: Promise<number> | null = null;
  let closed = false;
  let lastReport = { dropped: 0, failed: 0 };

  const schedule = () => {
    if (timer !== undefined || writing !== null || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void writeBatches();
    }, o.flushDelayMs);
    timer.unref();
  };

  const writeBatches = (): Promise<void> => {
    writing ??= (async () => {
      while (queue.length > 0 && o.available()) {
        let batch: LogRecord[] | null = queue.length <= o.batchSize ? queue : queue.slice(0, o.batchSize);
        queue = batch === queue ? [] : queue.slice(o.batchSize);
        const ids = batch.map((record) => record.id);
        for (const record of batch) bytes -= recordSize(record);
        try {
          // The records are let go once handed over (SQLite's writer thread has its copy when
          // `write` returns its promise): kept through the write, their request and response
          // strings outlived two scavenges and were copied into the old generation.
          await observed(observe, 'log_write', () => {
            const records = batch!;
            batch = null;
            return o.writer!.write(records);
          });
          counts.written += ids.length;
        } catch (error) {
          counts.failed += ids.length;
          o.onWriteError(error as Error);
          break;
        } finally {
          for (const id of ids) held.delete(id);
        }
      }
    })().finally(() => {
      writing = null;
      if (queue.length > 0 && o.available()) schedule();
    });
    return writing;
  };

  const pruneTimer = enabled
    ? setInterval(() => {
        report();
        if (o.available()) void prune().catch(() => undefined);
      }, o.pruneIntervalMs)
    : undefined;
  pruneTimer?.unref();

  /** One line a minute while records are lost, so an operator sees it without a metrics system. */
  function report() {
    if (counts.dropped === lastReport.dropped && counts.failed === lastReport.failed) return;
    o.logger.warn({ dropped: counts.dropped - lastReport.dropped, failed: counts.failed - lastReport.failed, queued: queue.length }, 'evaluation log: evaluations not recorded');
    lastReport = { dropped: counts.dropped, failed: counts.failed };
  }

  function prune(): Promise<number> {
    if (!enabled) return Promise.resolve(0);
    pruning ??= (async () => {
      const before = firstIdAt(now() - o.retentionDays * 86_400_000);
      let total = 0;
      for (;;) {
        // Small batches: each is one short transaction, so writers and readers wait little.
        const deleted = await observed(observe, 'prune', () => o.writer!.prune(before, o.pruneBatch));
        total += deleted;
        if (deleted < o.pruneBatch || closed) break;
      }
      counts.pruned += total;
      return total;
    })().finally(() => {
      pruning = null;
    });
    return pruning;
  }

  return {
    record(record) {
      if (!enabled) return;
      const size = recordSize(record);
      if (queue.length >= o.maxEntries || bytes + size > o.maxBytes || closed) {
        counts.dropped += 1;
        return;
      }
      queue.push(record);
      held.add(record.id);
      bytes += size;
      if (queue.length >= o.batchSize && writing === null) {
        clearTimeout(timer);
        timer = undefined;
        void writeBatches();
      } else {
        schedule();
      }
    },
    stats: () => ({ enabled, queued: queue.length, queued_bytes: bytes, ...counts }),
    flush() {
      if (!enabled) return Promise.resolve();
      // Starts at once when idle: the batch is taken now, not after a tick.
      return writing === null ? writeBatches() : writing.then(writeBatches);
    },
    holds: (id) => held.has(id),
    prune,
    resume: () => {
      if (queue.length > 0) schedule();
    },
    async erase(account, userId, email) {
      if (!enabled) return null;
      await (writing === null ? writeBatches() : writing.then(writeBatches));
      return o.writer!.erase(account, userId, email);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(pruneTimer);
      if (enabled) {
        await pruning?.catch(() => undefined);
        // What was answered before the shutdown is kept, if the store takes it; what it cannot take is counted.
        await writing;
        await writeBatches();
        counts.dropped += queue.length;
        queue = [];
        held.clear();
        bytes = 0;
        report();
      }
      await o.writer?.close();
    },
  };
}
