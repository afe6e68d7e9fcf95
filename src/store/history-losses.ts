import type { Logger } from 'pino';
import type { HistoryStoreStats } from '../history/store.js';

/**
 * One warning at most each time it is called (every minute, with pruning) while behaviour history
 * loses changes, as the evaluation log reports its own: an operator without a metrics system sees
 * it in the log. `refused`: events (or velocity counts added after a decision) not recorded, what
 * waits to be written at its bound (the writer behind the traffic); `failed`: the identifiers of
 * writes the store refused (HistoryStoreStats). Counts since the last line, and what waits now.
 */
export function historyLossReport(stats: () => HistoryStoreStats, logger: Logger): () => void {
  let last = { refused: 0, failed: 0 };
  return () => {
    const { refused = 0, failed, pending } = stats();
    if (refused === last.refused && failed === last.failed) return;
    logger.warn({ refused: refused - last.refused, failed: failed - last.failed, pending }, 'behaviour history: changes not kept');
    last = { refused, failed };
  };
}
