import type { ErasedHistory } from '../history/store.js';

/**
 * The history's maintenance statements (pruning by age, erasing a person), written once with `?`
 * placeholders, numbered for PostgreSQL. SQLite keeps its history in one table by key since
 * migration 17 and has its own, SQLITE_PRUNE_STATEMENTS and SQLITE_ERASE_STATEMENTS below, which
 * its writer thread prepares as they are (velocity cells, in the same table on both engines, share
 * theirs). Each prune statement deletes one small batch: a short transaction, so writers wait little.
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
  /** SQLite's reverse rows (migration 18): PostgreSQL finds the person among accounts sets by its identity index, and keeps none. */
  reverse: null,
} as const;

/**
 * SQLite keeps its history in one table by key (migration 17, `history_cells`): these are its
 * statements. The ones above are PostgreSQL's (and, for its velocity counters, SQLite's too).
 *
 * The write-back (the writer thread, sqlite-log-worker.ts): cells are written as they stand in the
 * main thread's memory, which is the only writer's. bench/history-layout.ts times them too. A
 * counter's bucket is cast: better-sqlite3 binds a number as a real, and `sub` (a member's hash
 * elsewhere) has no type to turn it back into an integer.
 */
export const SQLITE_HISTORY_WRITES = {
  upsertKey: `insert into history_cells (account_id, key, kind, sub, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous)
  values (?, ?, 'k', 0, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, key, kind, sub) do update set first_seen = excluded.first_seen, last_seen = excluded.last_seen,
  country = excluded.country, latitude = excluded.latitude, longitude = excluded.longitude, radius_km = excluded.radius_km, asn = excluded.asn, anonymous = excluded.anonymous`,
  /** [account, key, grain, bucket, n, at]: grain 1 is kind `m`, 2 is `h`; `at` a time within the bucket. */
  upsertCount: `insert into history_cells (account_id, key, kind, sub, n, last_seen) values (?, ?, case ? when 1 then 'm' else 'h' end, cast(? as integer), ?, ?)
  on conflict (account_id, key, kind, sub) do update set n = excluded.n, last_seen = excluded.last_seen`,
  upsertMember: `insert into history_cells (account_id, key, kind, sub, last_seen) values (?, ?, ?, ?, ?)
  on conflict (account_id, key, kind, sub) do update set last_seen = excluded.last_seen`,
  /**
   * [account, member, key, last_seen]: with each accounts-set member, its reverse row under the
   * member's own key (migration 18), for erasure; a member trimmed from the set keeps it until pruned.
   */
  upsertReverse: `insert into history_cells (account_id, key, kind, sub, last_seen) values (?, ?, 'r', ?, ?)
  on conflict (account_id, key, kind, sub) do update set last_seen = excluded.last_seen`,
  deleteMember: 'delete from history_cells where account_id = ? and key = ? and kind = ? and sub = ?',
  upsertVelocity: `insert into history_velocity (account_id, key, series, bucket, shard, n, expires) values (?, ?, ?, ?, 0, ?, ?)
  on conflict (account_id, key, series, bucket, shard) do update set n = excluded.n, expires = excluded.expires`,
} as const;

/**
 * The reader's statements (src/store/history-sqlite.ts, its own connection). A key's cells: its own
 * row (`k`), its counters (`m`, `h`) and its sets' members (`a`, `c`, `d`), one range of the primary
 * key that ends before its reverse rows (`r`, erasure's: migration 18; `r` sorts after every other
 * kind), so a person's reverse rows (one per address and device they were seen from within
 * HISTORY_DAYS, no other bound) are never read. test/store/history-cells-plans.test.ts checks the range.
 */
export const SQLITE_HISTORY_READS = {
  cells: "select kind, sub, n, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous from history_cells where account_id = ? and key = ? and kind < 'r'",
  velocity: 'select series, bucket, sum(n) as n, max(expires) as expires from history_velocity where account_id = ? and key = ? and expires > ? group by series, bucket',
  devices: "select sub from history_cells where account_id = ? and key = ? and kind = 'd'",
} as const;

/**
 * SQLite's pruning, one small batch a statement as above, through migration 17's age index (kind,
 * last_seen). A counter's `last_seen` is a time within its bucket, so "before the end of the last
 * bucket no window reads" finds exactly the counters of that bucket and older. One statement a
 * grain: a compound select under `in` made SQLite scan the whole table.
 */
export const SQLITE_PRUNE_STATEMENTS = {
  /** The end of the last minute bucket no window reads: (bucket + 1) × 60,000. */
  minutes: "delete from history_cells where rowid in (select rowid from history_cells where kind = 'm' and last_seen < ? limit ?)",
  /** The end of the last hour bucket no window reads: (bucket + 1) × 3,600,000. */
  hours: "delete from history_cells where rowid in (select rowid from history_cells where kind = 'h' and last_seen < ? limit ?)",
  velocity: PRUNE_STATEMENTS.velocity,
  /** Identifier rows, set members and their reverse rows past HISTORY_DAYS. */
  seen: "delete from history_cells where rowid in (select rowid from history_cells where kind in ('k', 'a', 'd', 'c', 'r') and last_seen < ? limit ?)",
} as const;

/**
 * SQLite's erasure: the same steps as ERASE_STATEMENTS, on `history_cells`. The person among the
 * accounts sets of IPs and devices: each set their reverse rows name (migration 18), by primary key.
 */
export const SQLITE_ERASE_STATEMENTS = {
  keys: "delete from history_cells where account_id = ? and key = ? and kind = 'k'",
  counts: "delete from history_cells where account_id = ? and key = ? and kind in ('m', 'h')",
  ownSets: "delete from history_cells where account_id = ? and key = ? and kind in ('a', 'd', 'c')",
  memberOf: "delete from history_cells where (account_id, key, kind, sub) in (select account_id, sub, 'a', key from history_cells where account_id = ? and key = ? and kind = 'r')",
  velocity: ERASE_STATEMENTS.velocity,
  deviceVelocity: "delete from history_velocity where account_id = ? and key in (select sub from history_cells where account_id = ? and key = ? and kind = 'd')",
  /** After memberOf, which reads them; not counted (they say again what the memberships say). */
  reverse: "delete from history_cells where account_id = ? and key = ? and kind = 'r'",
} as const satisfies Record<keyof typeof ERASE_STATEMENTS, string>;

/**
 * One key's erasure, in order: which statement (ERASE_STATEMENTS or SQLITE_ERASE_STATEMENTS; one an
 * engine does not have is null, and skipped), what it binds, and which count its deleted rows add
 * to (none: not counted). Every runner walks this one list: SQLite's writer thread (synchronously,
 * in its transaction), PostgreSQL's maintenance and erasure with history off (awaiting each step in theirs).
 */
export const ERASE_STEPS: ReadonlyArray<{ statement: keyof typeof ERASE_STATEMENTS; counts: keyof ErasedHistory | null; values: (account: string, key: Uint8Array) => unknown[] }> = [
  { statement: 'keys', counts: 'identifiers', values: (account, key) => [account, key] },
  { statement: 'counts', counts: 'counters', values: (account, key) => [account, key] },
  // The person's devices' velocity counters, while their set still names them (ownSets deletes it).
  { statement: 'deviceVelocity', counts: 'counters', values: (account, key) => [account, account, key] },
  { statement: 'velocity', counts: 'counters', values: (account, key) => [account, key] },
  { statement: 'ownSets', counts: 'memberships', values: (account, key) => [account, key] },
  { statement: 'memberOf', counts: 'memberships', values: (account, key) => [account, key] },
  { statement: 'reverse', counts: null, values: (account, key) => [account, key] },
];

/** `?` to `$1`, `$2`…, for PostgreSQL. */
export function numbered(text: string): string {
  let i = 0;
  return text.replace(/\?/g, () => `$${++i}`);
}
