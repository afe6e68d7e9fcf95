/**
 * The history's maintenance statements (pruning by age, erasing a person), written once with `?`
 * placeholders: the SQLite writer thread prepares them as they are, PostgreSQL gets them numbered.
 * Each prune statement deletes one small batch: a short transaction, so writers wait little.
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

/**
 * SQLite's write-back (the writer thread, sqlite-log-worker.ts): cells are written as they stand in
 * the main thread's memory, which is the only writer's. bench/history-layout.ts times them too.
 */
export const SQLITE_HISTORY_WRITES = {
  upsertKey: `insert into history_keys (account_id, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, key) do update set first_seen = excluded.first_seen, last_seen = excluded.last_seen,
  country = excluded.country, latitude = excluded.latitude, longitude = excluded.longitude, radius_km = excluded.radius_km, asn = excluded.asn, anonymous = excluded.anonymous`,
  upsertCount: `insert into history_counts (account_id, key, grain, bucket, shard, n) values (?, ?, ?, ?, 0, ?)
  on conflict (account_id, key, grain, bucket, shard) do update set n = excluded.n`,
  upsertMember: `insert into history_members (account_id, key, kind, member, last_seen) values (?, ?, ?, ?, ?)
  on conflict (account_id, key, kind, member) do update set last_seen = excluded.last_seen`,
  deleteMember: 'delete from history_members where account_id = ? and key = ? and kind = ? and member = ?',
};

/** `?` to `$1`, `$2`…, for PostgreSQL. */
export function numbered(text: string): string {
  let i = 0;
  return text.replace(/\?/g, () => `$${++i}`);
}
