import type { ErasedHistory } from '../history/store.js';

/**
 * The history's maintenance statements (pruning by age, erasing a person), written once with `?`
 * placeholders, numbered for PostgreSQL. SQLite keeps its history one row an identifier since
 * migration 19 and prunes and erases it in JS (history-packed.ts); velocity cells, in the same table
 * on both engines, share their statements. Each prune statement deletes one small batch: a short
 * transaction, so writers wait little.
 */
export const PRUNE_STATEMENTS = {
  /** Minute counters past the one-hour window, hour counters past the 24-hour one: nothing reads them. */
  counts: `delete from history_counts where (account_id, key, grain, bucket, shard) in (
    select account_id, key, grain, bucket, shard from history_counts where (grain = 1 and bucket <= ?) or (grain = 2 and bucket <= ?) limit ?)`,
  /** Velocity cells no window reads any more (migration 12). */
  velocity: `delete from history_velocity where (account_id, key, series, bucket, shard) in (
    select account_id, key, series, bucket, shard from history_velocity where expires <= ? limit ?)`,
  members: `delete from history_members where (account_id, key, kind, member) in (
    select account_id, key, kind, member from history_members where last_seen < ? limit ?)`,
  keys: `delete from history_keys where (account_id, key) in (select account_id, key from history_keys where last_seen < ? limit ?)`,
} as const;

/** Everything under one key of an account, and that key among the accounts of every IP and device. */
export const ERASE_STATEMENTS = {
  keys: 'delete from history_keys where account_id = ? and key = ?',
  counts: 'delete from history_counts where account_id = ? and key = ?',
  ownSets: 'delete from history_members where account_id = ? and key = ?',
  memberOf: "delete from history_members where account_id = ? and kind = 'a' and member = ?",
  /** Velocity counters under the key (e-mail, user). */
  velocity: 'delete from history_velocity where account_id = ? and key = ?',
  /**
   * Velocity counters of the person's devices (the devices set of their e-mail or user): a device
   * counter is the person's. Run before ownSets, which deletes that set. A device shared with others
   * loses their counts too: erasure errs on forgetting.
   */
  deviceVelocity: "delete from history_velocity where account_id = ? and key in (select member from history_members where account_id = ? and key = ? and kind = 'd')",
} as const;

/** The SQLite reader's velocity statement (src/store/history-sqlite.ts, its own connection). */
export const SQLITE_HISTORY_READS = {
  velocity: 'select series, bucket, sum(n) as n, max(expires) as expires from history_velocity where account_id = ? and key = ? and expires > ? group by series, bucket',
} as const;

/**
 * One key's erasure on PostgreSQL, in order: which statement, what it binds, and which count its
 * deleted rows add to. Both runners walk this one list: the maintenance and erasure with history
 * off. (SQLite erases in JS: history-packed.ts.)
 */
export const ERASE_STEPS: ReadonlyArray<{ statement: keyof typeof ERASE_STATEMENTS; counts: keyof ErasedHistory; values: (account: string, key: Uint8Array) => unknown[] }> = [
  { statement: 'keys', counts: 'identifiers', values: (account, key) => [account, key] },
  { statement: 'counts', counts: 'counters', values: (account, key) => [account, key] },
  // The person's devices' velocity counters, while their set still names them (ownSets deletes it).
  { statement: 'deviceVelocity', counts: 'counters', values: (account, key) => [account, account, key] },
  { statement: 'velocity', counts: 'counters', values: (account, key) => [account, key] },
  { statement: 'ownSets', counts: 'memberships', values: (account, key) => [account, key] },
  { statement: 'memberOf', counts: 'memberships', values: (account, key) => [account, key] },
];

/** `?` to `$1`, `$2`…, for PostgreSQL. */
export function numbered(text: string): string {
  let i = 0;
  return text.replace(/\?/g, () => `$${++i}`);
}
