import type { HistoryEvent, Prior } from './event.js';
import type { VelocityCount } from './velocity.js';

/**
 * The port behaviour history needs from the store (one adapter per engine): record an event and
 * read what came before it in one step, erase a person, prune by age. The request path uses
 * `record` only.
 */
export interface HistoryStore {
  /**
   * Synchronous on SQLite (memory, and WAL reads of identifiers the key filter says the file may
   * hold); one read-only round trip on PostgreSQL, the changes written in batches. Never retried.
   * `null`: not recorded, because the changes waiting to be written fill memory (SQLite); the
   * evaluation goes without history.
   */
  record(event: HistoryEvent): Prior | null | Promise<Prior>;
  /**
   * True where `record` never waits (SQLite): the recorder then counts no round trips per key and
   * makes no deadline for the step.
   */
  readonly synchronous?: boolean;
  /**
   * The round trips the recorder lets wait at once, in all and for one IP address or device, where
   * the store's own differ from the recorder's (MAX_HISTORY_IN_FLIGHT, MAX_KEY_IN_FLIGHT):
   * PostgreSQL's reads see the events in flight beside them and share statements, so one key may
   * hold more.
   */
  readonly inFlight?: { total: number; perKey: number };
  /**
   * Velocity counts made after the rules decided (counters filtered on the answer's state), for an
   * event recorded at `at`: added as `record` adds its own, with the same bounds (not counted when
   * the changes waiting to be written are full). Never waits for the store.
   */
  countAfter(account: string, counts: readonly VelocityCount[], at: number): void;
  /**
   * Records the event without reading (PostgreSQL: into the pending batch, written with the next
   * flush), for an evaluation the recorder answers from this replica's counts without asking (its IP
   * address or device past its round trips in flight, or the store marked down). False when it was
   * not (the changes waiting to be written are full). Absent where `record` never waits (SQLite).
   */
  remember?(event: HistoryEvent): boolean;
  /** Removes everything kept under these keys, and these keys from every set of the account. */
  erase(account: string, keys: Buffer[]): Promise<ErasedHistory>;
  /** Deletes, in small batches, what is older than HISTORY_DAYS (and counters older than their window). */
  prune(): Promise<number>;
  stats(): HistoryStoreStats;
  close(): Promise<void>;
}

export interface ErasedHistory {
  /** Identifier rows (first seen, last place). */
  identifiers: number;
  counters: number;
  /** Set members: the person's devices and countries, and the person among the accounts of IPs and devices. */
  memberships: number;
}

export interface HistoryStoreStats {
  /** Identifiers whose changes could not be written: those of each batch the store refused (on PostgreSQL also an event its read could not place, one each). */
  failed: number;
  /** Events (or an evaluation's velocity counts after its decision) not recorded because the changes waiting to be written were at their bound; on SQLite such an event is answered without history. */
  refused?: number;
  /** Removed by pruning: rows on PostgreSQL; on SQLite the cells, identifiers and reverse entries taken out of its packed rows (migration 19). */
  pruned: number;
  /** SQLite: identifiers held in memory, and those with changes not yet written. */
  cached?: number;
  pending?: number;
  /** SQLite: estimated bytes the identifiers in memory hold (bounded by its maxBytes). */
  bytes?: number;
  /** PostgreSQL: evaluations whose read is in flight or waiting to be sent. */
  reading?: number;
}

export const NO_ERASURE: ErasedHistory = { identifiers: 0, counters: 0, memberships: 0 };
