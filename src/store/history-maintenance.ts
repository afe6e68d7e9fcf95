import type pg from 'pg';
import { HOUR_MS, MINUTE_MS, MINUTES_IN_WINDOW, HOURS_IN_WINDOW, DAY_MS } from '../history/caps.js';
import type { ErasedHistory, HistoryStore } from '../history/store.js';
import { ERASE_STATEMENTS, ERASE_STEPS, numbered, PRUNE_STATEMENTS } from './history-sql.js';

export interface HistoryMaintenanceOptions {
  historyDays: number;
  now: () => number;
  pruneBatch?: number;
}

/** Where the age limits stand now: the last minute and hour bucket no window reads, and the oldest time kept. */
export function pruneBounds(now: number, historyDays: number) {
  return {
    minute: Math.floor(now / MINUTE_MS) - MINUTES_IN_WINDOW,
    /** The minute now: velocity cells that expire by it are read by no window (history/velocity.ts). */
    now: Math.floor(now / MINUTE_MS),
    hour: Math.floor(now / HOUR_MS) - HOURS_IN_WINDOW,
    before: now - historyDays * DAY_MS,
  };
}

export const PRUNE_BATCH = 1_000;

/**
 * PostgreSQL's pruning and erasure, through the pool (SQLite's writer thread runs its own:
 * history-packed.ts). A prune stops between batches once `stopped()`
 * (the store closing): the next minute's prune, or the next start's, takes the rest.
 */
export function postgresMaintenance(pool: pg.Pool, options: HistoryMaintenanceOptions, stopped: () => boolean): Pick<HistoryStore, 'erase' | 'prune'> & { pruned: () => number } {
  const batch = options.pruneBatch ?? PRUNE_BATCH;
  let pruned = 0;
  const deleteAll = async (text: string, values: unknown[]) => {
    let total = 0;
    for (;;) {
      const result = await pool.query({ text: numbered(text), values: [...values, batch] });
      total += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < batch || stopped()) return total;
    }
  };
  return {
    async prune() {
      const b = pruneBounds(options.now(), options.historyDays);
      let total = 0;
      for (const [text, values] of [[PRUNE_STATEMENTS.counts, [b.minute, b.hour]], [PRUNE_STATEMENTS.velocity, [b.now]], [PRUNE_STATEMENTS.members, [b.before]], [PRUNE_STATEMENTS.keys, [b.before]]] as const) {
        if (stopped()) break;
        total += await deleteAll(text, [...values]);
      }
      pruned += total;
      return total;
    },
    async erase(account, keys) {
      const client = await pool.connect();
      const erased: ErasedHistory = { identifiers: 0, counters: 0, memberships: 0 };
      try {
        await client.query('begin');
        for (const key of keys) {
          for (const step of ERASE_STEPS) {
            const deleted = (await client.query({ text: numbered(ERASE_STATEMENTS[step.statement]), values: step.values(account, key) })).rowCount ?? 0;
            erased[step.counts] += deleted;
          }
        }
        await client.query('commit');
        return erased;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    pruned: () => pruned,
  };
}
