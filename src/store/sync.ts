import type { Logger } from 'pino';
import type { Engine } from './engine.js';
import type { StoreHealth } from './health.js';
import { ignoreStoreOperations, observed, type StoreObserver } from './observer.js';
import { readSnapshot, type ConfigSnapshot } from './snapshot.js';

export interface SyncOptions {
  engine: Engine;
  health: StoreHealth;
  logger: Logger;
  intervalMs: number;
  /** Versions already compiled, whose text need not be read again. */
  compiled: () => ReadonlySet<number>;
  /** Swaps what the request path serves; throws to refuse a snapshot (the last good one stays). */
  apply: (snapshot: ConfigSnapshot) => void;
  /** Each poll's and snapshot read's duration and outcome (metrics). */
  observe?: StoreObserver;
}

export interface Sync {
  /** Polls now instead of at the next tick (tests, a signal handler). */
  check(): Promise<void>;
  close(): void;
}

/**
 * Brings every replica the store's changes: polls the change counter every `intervalMs` (one
 * indexed single-row read), and on a change reads the snapshot and swaps it in. The poll doubles
 * as the store's health probe. A failed poll leaves the last good configuration serving.
 */
export function startSync(options: SyncOptions, initial: ConfigSnapshot): Sync {
  let revision = initial.revision;
  let running: Promise<void> | null = null;
  const observe = options.observe ?? ignoreStoreOperations;

  const once = async () => {
    let current: number;
    try {
      current = await observed(observe, 'poll', () => options.engine.revision());
    } catch (error) {
      options.health.down(error as Error);
      return;
    }
    options.health.up();
    if (current === revision) return;
    let snapshot: ConfigSnapshot;
    try {
      snapshot = await observed(observe, 'snapshot', () => readSnapshot(options.engine, options.compiled()));
    } catch (error) {
      options.health.down(error as Error);
      return;
    }
    // Taken as seen even if refused: the refusal is logged once, not on every poll until the next change.
    revision = snapshot.revision;
    try {
      options.apply(snapshot);
    } catch (error) {
      options.logger.error({ error: (error as Error).message }, 'store change not applied; the last good configuration keeps serving');
    }
  };
  const check = () => {
    running ??= once().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => void check(), options.intervalMs);
  timer.unref();
  return { check, close: () => clearInterval(timer) };
}
