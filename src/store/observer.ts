/**
 * What the store reports about its own work, for metrics: how long each operation took and whether
 * it succeeded. Called off the request path (the poll, a batch of the log, a prune), never per
 * evaluation. The service passes the metrics' recorder; tools and tests pass nothing.
 */
export type StoreOperation =
  /** The change-counter poll, every RELOAD_INTERVAL_MS: also the store's health probe. */
  | 'poll'
  /** Reading keys and rule sets after the counter moved. */
  | 'snapshot'
  /** One batch of the evaluation log. */
  | 'log_write'
  /** One batch of the retention prune. */
  | 'prune';

export type StoreObserver = (operation: StoreOperation, seconds: number, ok: boolean) => void;

export const ignoreStoreOperations: StoreObserver = () => undefined;

/** Runs `work`, reporting its duration and outcome; the outcome itself (value or error) is passed on unchanged. */
export async function observed<T>(observe: StoreObserver, operation: StoreOperation, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const value = await work();
    observe(operation, (performance.now() - started) / 1000, true);
    return value;
  } catch (error) {
    observe(operation, (performance.now() - started) / 1000, false);
    throw error;
  }
}
