import type { Kysely, Transaction } from 'kysely';
import type { HistoryStore } from '../history/store.js';
import type { HistoryMaintenanceOptions } from './history-maintenance.js';
import type { LogRecord } from '../core/log-record.js';
import type { EngineKind } from './migrations/index.js';
import type { AccountRow, Database } from './schema.js';
import type { DatabaseUrl } from '../config/store-url.js';

/**
 * What differs between SQLite and PostgreSQL, behind one interface. Everything else (accounts,
 * keys, rule sets, the audit log, migrations) is written once against the Kysely query layer.
 */
export interface Engine {
  readonly kind: EngineKind;
  readonly database: DatabaseUrl;
  readonly db: Kysely<Database>;
  /**
   * A transaction holding the store's schema lock, so replicas starting together migrate one at a
   * time: a PostgreSQL advisory lock; in SQLite every write transaction takes the file's write lock
   * at BEGIN (`begin immediate`) already.
   */
  lockedTransaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /** Reads an account and keeps other writers off it until the transaction ends. */
  lockAccount(trx: Transaction<Database>, id: string): Promise<AccountRow | undefined>;
  /** The change counter, read the cheapest way the engine has (it is polled every RELOAD_INTERVAL_MS). */
  revision(): Promise<number>;
  /**
   * Opens what writes off the request path: the evaluation log's writer and behaviour history.
   * SQLite: both through one writer thread with its own connection; PostgreSQL: the pool.
   */
  openWriters(needs: WriterNeeds): Promise<{ log: LogWriter | null; history: HistoryStore | null }>;
  close(): Promise<void>;
}

/** Writes batches of the evaluation log and prunes it. One call at a time (the log's queue sees to it). */
export interface LogWriter {
  write(records: LogRecord[]): Promise<void>;
  /** Deletes up to `limit` evaluations whose id sorts before `beforeId` (and the labels before it); resolves with how many. */
  prune(beforeId: string, limit: number): Promise<number>;
  /** Deletes a person's evaluations (by user id or normalised e-mail) and their labels, after every write sent before. */
  erase(account: string, userId: string | null, email: string | null): Promise<LogErasure>;
  close(): Promise<void>;
}

export interface WriterNeeds {
  log: boolean;
  /** Behaviour history's settings; null when it is off (HISTORY_DAYS=0, or a CLI). */
  history: (HistoryMaintenanceOptions & {
    onWriteError: (error: Error) => void;
    /** How long an evaluation waits for its history step (HISTORY_TIMEOUT_MS): PostgreSQL's server-side limit derives from it. */
    stepTimeoutMs: number;
  }) | null;
}

export interface LogErasure {
  evaluations: number;
  labels: number;
}
