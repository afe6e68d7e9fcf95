import Sqlite from 'better-sqlite3';
import { GRAIN_HOUR, GRAIN_MINUTE, HOURS_IN_WINDOW, HOUR_MS, MINUTES_IN_WINDOW, MINUTE_MS, SET_ACCOUNTS, SET_DEVICES } from '../history/caps.js';
import type { ErasedHistory } from '../history/store.js';
import type { KeyColumns } from './history-batch.js';
import type { HistoryPackedRow } from './schema.js';
import type { HistoryWrite } from './sqlite-log-worker.js';

/**
 * SQLite's behaviour history, one row an identifier (migration 19, `history_packed`): the
 * identifier's own columns (first and last seen, a user's last place), and its counters and set
 * members packed in one blob, `cells`; under a person's key, `reverse`, the addresses and devices
 * whose accounts sets hold them (erasure's way to them, as migration 18's reverse rows were). A new
 * person is three rows written (e-mail, user, device) where they were thirteen (3 identifiers, 2
 * counters, 5 set members, 2 reverse rows, 1 member trimmed from the shared address's set), and the
 * shared address one row a write-back, whatever its people: bench/history-layout.ts, 200,000 people,
 * 145–151 against 399–415 CPU µs a new person, a file a third the size.
 *
 * The blobs are written only by the writer thread (src/store/sqlite-log-worker.ts): it reads a row,
 * applies the main thread's changes (history-batch.ts: absolute counts, members' times, members a
 * set no longer keeps) and writes it back. Pruning and erasure rewrite rows here too, in JS, in the
 * writer's transactions; the main thread reads rows (`forEachCell`) and keeps the reverse entries
 * out of memory.
 *
 * A cell, little-endian, one after another:
 * - a counter: its grain (1 minute, 2 hour), the bucket (uint32, minutes or hours since the epoch),
 *   the events in it (uint32): 9 bytes;
 * - a set member: its kind (`a`, `c`, `d`; `r` in `reverse`), the member's length (uint8) and bytes,
 *   seen last (float64 ms): 10 bytes and the member's.
 *
 * `oldest`: the earliest time of the identifier's last event, its members and reverse entries
 * (indexed: pruning finds rows with something past HISTORY_DAYS by it). Counters are not in it:
 * the write-back drops those no window reads (by the row's own latest bucket: time moves forward),
 * and pruning drops the rest with the row's stale members. A row with counters only (an address
 * whose accounts set lost its last member to an erasure) takes its latest counter's time.
 */
/** An identifier's own columns as the write-back hands them (history-batch.ts); first seen null: no event of the identifier itself (an IP, or a key with reverse entries only). */
type IdentifierColumns = { [K in keyof KeyColumns]: KeyColumns[K] | null };

export interface PackedRow extends IdentifierColumns {
  rowid: number | null;
  account: string;
  key: Buffer;
  /** grain × 1e9 + bucket → events (the main thread's form, history-sqlite.ts). */
  counts: Map<number, number>;
  /** kind + the member's bytes as latin1 → seen last. */
  members: Map<string, number>;
  /** The key whose accounts set holds this person, as latin1 → the membership's time. */
  reverse: Map<string, number>;
}

/**
 * Reverse entries a person's row keeps, at most (6.6 KB): the row is read and written again with
 * every write-back that touches the person, so it is bounded, or one account tried from 100,000
 * proxies (credential stuffing) would make each write-back rewrite megabytes and the writer fall
 * behind for everyone. Past it, one more entry (OVERFLOW) says only when the person last joined a
 * set it did not name, and their erasure looks for them in every accounts set of the account
 * (`scanSets`, a pass over the account's rows: rare, and only for such a person).
 */
export const REVERSE_KEEP = 256;
/** The reverse entry that stands for the ones past REVERSE_KEEP (no key is empty). */
const OVERFLOW = '';

/** A counter's key in `counts`, grain × 1e9 + bucket (history-sqlite.ts's `cell`), and back. */
export const cellOf = (grain: number, bucket: number) => grain * 1e9 + bucket;
export const grainOf = (c: number) => (c >= 2e9 ? GRAIN_HOUR : GRAIN_MINUTE);
export const bucketOf = (c: number) => c - grainOf(c) * 1e9;

const COUNTER_BYTES = 9;
const MEMBER_BASE = 10;
const UINT32_MAX = 2 ** 32 - 1;
const REVERSE = 0x72; // 'r'

/**
 * Walks a blob's cells: counters to `onCount`, members to `onMember` with where the member's bytes
 * are in the blob (a reader turns them into what it keys members by). A cell cut short or of an
 * unknown tag ends the walk with an error: the blob is not one this code wrote.
 */
export function forEachCell(
  blob: Uint8Array | null,
  onCount: (grain: number, bucket: number, n: number) => void,
  onMember: (kind: number, blob: Buffer, start: number, end: number, seen: number) => void,
): void {
  if (blob === null) return;
  const b = Buffer.isBuffer(blob) ? blob : Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  let at = 0;
  while (at < b.length) {
    const tag = b[at]!;
    if (tag === GRAIN_MINUTE || tag === GRAIN_HOUR) {
      if (at + COUNTER_BYTES > b.length) break;
      onCount(tag, b.readUInt32LE(at + 1), b.readUInt32LE(at + 5));
      at += COUNTER_BYTES;
      continue;
    }
    if (tag < 0x61 || tag > 0x7a || at + 2 > b.length) break;
    const start = at + 2;
    const end = start + b[at + 1]!;
    if (end + 8 > b.length) break;
    onMember(tag, b, start, end, b.readDoubleLE(end));
    at = end + 8;
  }
  if (at !== b.length) throw new Error(`history_packed: a cell cut short or unknown at byte ${at} of ${b.length}`);
}

/** The row's cells and reverse entries, as the writer changes them. */
export function unpack(row: Omit<PackedRow, 'counts' | 'members' | 'reverse'>, cells: Uint8Array | null, reverse: Uint8Array | null): PackedRow {
  const packed: PackedRow = { ...row, counts: new Map(), members: new Map(), reverse: new Map() };
  forEachCell(
    cells,
    (grain, bucket, n) => packed.counts.set(cellOf(grain, bucket), n),
    (kind, b, start, end, seen) => packed.members.set(String.fromCharCode(kind) + b.toString('latin1', start, end), seen),
  );
  forEachCell(reverse, () => undefined, (_kind, b, start, end, seen) => packed.reverse.set(b.toString('latin1', start, end), seen));
  return packed;
}

/** The blobs to store: `cells` and `reverse` (null when empty). */
export function pack(row: PackedRow): { cells: Buffer | null; reverse: Buffer | null } {
  return { cells: packEntries(row.counts, row.members, null), reverse: packEntries(null, row.reverse, REVERSE) };
}

/**
 * Counters, then members: each member's tag is `tag`, or when null the first character of its key
 * (kind + bytes, as `members` keys them).
 */
function packEntries(counts: Map<number, number> | null, members: Map<string, number>, tag: number | null): Buffer | null {
  const from = tag === null ? 1 : 0;
  let size = (counts?.size ?? 0) * COUNTER_BYTES;
  members.forEach((_seen, m) => (size += MEMBER_BASE + m.length - from));
  if (size === 0) return null;
  const b = Buffer.allocUnsafe(size);
  let at = 0;
  counts?.forEach((n, c) => {
    b[at] = grainOf(c);
    b.writeUInt32LE(bucketOf(c), at + 1);
    b.writeUInt32LE(Math.min(n, UINT32_MAX), at + 5);
    at += COUNTER_BYTES;
  });
  members.forEach((seen, m) => {
    at = tag === null ? packMember(b, at, m.charCodeAt(0), m.slice(1), seen) : packMember(b, at, tag, m, seen);
  });
  return b;
}

/** A member's bytes are given as latin1 text (one character a byte). */
function packMember(b: Buffer, at: number, tag: number, member: string, seen: number): number {
  const length = member.length;
  if (length > 255) throw new Error(`history_packed: a member of ${length} bytes (255 at most)`);
  b[at] = tag;
  b[at + 1] = length;
  b.write(member, at + 2, length, 'latin1');
  b.writeDoubleLE(seen, at + 2 + length);
  return at + 2 + length + 8;
}

/** The earliest time pruning finds the row by (see above); null: nothing in it. */
export function oldestOf(row: PackedRow): number | null {
  let oldest = row.lastSeen ?? Infinity;
  row.members.forEach((seen) => {
    if (seen < oldest) oldest = seen;
  });
  row.reverse.forEach((seen) => {
    if (seen < oldest) oldest = seen;
  });
  if (oldest !== Infinity) return oldest;
  let latest = -Infinity;
  row.counts.forEach((_n, c) => {
    latest = Math.max(latest, bucketOf(c) * (grainOf(c) === GRAIN_HOUR ? HOUR_MS : MINUTE_MS));
  });
  return latest === -Infinity ? null : latest;
}

/** Counters no window reads any more, after the row's latest minute and hour: dropped. */
function dropStaleCounts(row: PackedRow): void {
  let minute = -Infinity;
  let hour = -Infinity;
  row.counts.forEach((_n, c) => {
    if (grainOf(c) === GRAIN_HOUR) hour = Math.max(hour, bucketOf(c));
    else minute = Math.max(minute, bucketOf(c));
  });
  dropCountsBefore(row, minute - MINUTES_IN_WINDOW, hour - HOURS_IN_WINDOW);
}

/** Drops entries seen before `before`; answers how many. */
function dropSeenBefore(entries: Map<string, number>, before: number): number {
  let dropped = 0;
  entries.forEach((seen, k) => {
    if (seen >= before) return;
    entries.delete(k);
    dropped += 1;
  });
  return dropped;
}

/** Drops minute buckets up to `minute`, hour buckets up to `hour`; answers how many. */
function dropCountsBefore(row: PackedRow, minute: number, hour: number): number {
  let dropped = 0;
  row.counts.forEach((_n, c) => {
    const stale = bucketOf(c) <= (grainOf(c) === GRAIN_HOUR ? hour : minute);
    if (stale) {
      row.counts.delete(c);
      dropped += 1;
    }
  });
  return dropped;
}

const COLUMNS = 'rowid, account_id, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous, cells, reverse';

/** The statements that read and write `history_packed`, on one connection. */
export const PACKED_SQL = {
  /** The main thread's read of a key (history-sqlite.ts): everything but its reverse entries. */
  read: 'select first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous, cells from history_packed where account_id = ? and key = ?',
  /** A key's blob alone (the devices of a person being erased). */
  cells: 'select cells from history_packed where account_id = ? and key = ?',
  row: `select ${COLUMNS} from history_packed where account_id = ? and key = ?`,
  /** Nothing if the key is there already (a fresh subject that was not: see `save`). */
  insert: `insert into history_packed (account_id, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous, cells, reverse, oldest)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, key) do nothing`,
  update: `update history_packed set first_seen = ?, last_seen = ?, country = ?, latitude = ?, longitude = ?, radius_km = ?, asn = ?, anonymous = ?, cells = ?, reverse = ?, oldest = ?
    where rowid = ?`,
  delete: 'delete from history_packed where rowid = ?',
  /** Rows with something past HISTORY_DAYS, oldest first, through `history_packed_oldest`. */
  stale: `select ${COLUMNS} from history_packed where oldest < ? order by oldest limit ?`,
  upsertVelocity: `insert into history_velocity (account_id, key, series, bucket, shard, n, expires) values (?, ?, ?, ?, 0, ?, ?)
  on conflict (account_id, key, series, bucket, shard) do update set n = excluded.n, expires = excluded.expires`,
  eraseVelocity: 'delete from history_velocity where account_id = ? and key = ?',
} as const;

/**
 * Erasure of a person past REVERSE_KEEP reverse entries: the account's rows whose cells hold the
 * bytes of the person as an accounts-set member (a tag, a length, the key; each checked once
 * unpacked). A pass over the account's rows, in C: deliberate, and rare (history-packed-plans.test.ts
 * leaves it out).
 */
export const SCAN_SETS = `select ${COLUMNS} from history_packed where account_id = ? and instr(cells, ?) > 0`;

type StoredRow = Omit<HistoryPackedRow, 'oldest'> & { rowid: number };

const fromStored = (r: StoredRow): PackedRow => unpack({
  rowid: r.rowid, account: r.account_id, key: r.key, firstSeen: r.first_seen, lastSeen: r.last_seen, country: r.country, latitude: r.latitude,
  longitude: r.longitude, radiusKm: r.radius_km, asn: r.asn, anonymous: r.anonymous,
}, r.cells, r.reverse);

/** A row of nothing yet under the key (not in the file). */
export const emptyRow = (account: string, key: Buffer): PackedRow => ({
  rowid: null, account, key, firstSeen: null, lastSeen: null, country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: null,
  counts: new Map(), members: new Map(), reverse: new Map(),
});

const bufferOf = (value: unknown) => {
  const v = value as Uint8Array;
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
};

/** A reverse entry, or past REVERSE_KEEP the overflow entry's time moved to it. */
function addReverse(reverse: Map<string, number>, holder: string, seen: number): void {
  if (reverse.has(holder) || reverse.size - (reverse.has(OVERFLOW) ? 1 : 0) < REVERSE_KEEP) {
    reverse.set(holder, seen);
    return;
  }
  reverse.set(OVERFLOW, Math.max(reverse.get(OVERFLOW) ?? seen, seen));
}

/** `extra`'s cells added to `row`'s: counts summed, identifier, members and reverse entries the later of the two. */
function merged(row: PackedRow, extra: PackedRow): PackedRow {
  if (extra.firstSeen !== null && extra.lastSeen !== null) {
    row.firstSeen = row.firstSeen === null ? extra.firstSeen : Math.min(row.firstSeen, extra.firstSeen);
    if (row.lastSeen === null || extra.lastSeen >= row.lastSeen) {
      Object.assign(row, { lastSeen: extra.lastSeen, country: extra.country, latitude: extra.latitude, longitude: extra.longitude, radiusKm: extra.radiusKm, asn: extra.asn, anonymous: extra.anonymous });
    }
  }
  extra.counts.forEach((n, c) => row.counts.set(c, (row.counts.get(c) ?? 0) + n));
  extra.members.forEach((seen, m) => row.members.set(m, Math.max(row.members.get(m) ?? seen, seen)));
  extra.reverse.forEach((seen, k) => row.reverse.set(k, Math.max(row.reverse.get(k) ?? seen, seen)));
  return row;
}

/** What pruning did: cells, identifiers and reverse entries removed, and rows it went through. */
export interface PackedPrune {
  removed: number;
  rows: number;
}

/**
 * The writer's work on `history_packed`, on its connection (the writer thread's, or erasure's with
 * history off): each in the caller's transaction.
 */
export function packedHistory(sqlite: Sqlite.Database) {
  const select = sqlite.prepare(PACKED_SQL.row);
  const insert = sqlite.prepare(PACKED_SQL.insert);
  const update = sqlite.prepare(PACKED_SQL.update);
  const remove = sqlite.prepare(PACKED_SQL.delete);
  const stale = sqlite.prepare(PACKED_SQL.stale);
  const upsertVelocity = sqlite.prepare(PACKED_SQL.upsertVelocity);
  const eraseVelocity = sqlite.prepare(PACKED_SQL.eraseVelocity);
  const scanSets = sqlite.prepare(SCAN_SETS);

  /** The `before` of the latest prune on this connection: members seen earlier are not written back (see `write`). */
  let prunedBefore = -Infinity;

  const read = (account: string, key: Buffer): PackedRow | null => {
    const r = select.get(account, key) as StoredRow | undefined;
    return r === undefined ? null : fromStored(r);
  };

  /**
   * Stores the row as it stands, or deletes it if nothing is left in it. A row not read from the
   * file (a fresh subject's, or one the file did not have) is inserted. The file may hold the key by
   * then: an earlier write-back may have written a reverse entry under a new person before their own
   * first write-back (more than one batch of identifiers pending). What memory holds is then added
   * to what the file has (`merged`), nothing lost.
   */
  const save = (row: PackedRow) => {
    const oldest = oldestOf(row);
    if (oldest === null && row.firstSeen === null) {
      if (row.rowid !== null) remove.run(row.rowid);
      return;
    }
    const { cells, reverse } = pack(row);
    const columns = [row.firstSeen, row.lastSeen, row.country, row.latitude, row.longitude, row.radiusKm, row.asn, row.anonymous, cells, reverse, oldest];
    if (row.rowid !== null) update.run(...columns, row.rowid);
    else if (insert.run(row.account, row.key, ...columns).changes === 0) save(merged(read(row.account, row.key)!, row));
  };

  return {
    /**
     * A write-back (history-batch.ts's rows): each identifier it touches read, changed and written
     * once, with the reverse entries of the accounts-set members it adds or sees later (a member
     * it has already, at the same time, is passed over). Trimmed members first: one trimmed and
     * seen again before this write-back is in both lists, and is kept.
     */
    write(write: HistoryWrite): number {
      // The rows this write-back touches, by account and key as text; and by the key's object: the
      // batch's decoder hands one Buffer for all the rows of a subject (history-batch.ts), so most
      // look-ups need no text made, hashed and compared (the largest part of this function's own
      // time in a profile of the writer thread, new-person mix). A key's bytes met through another
      // object (a set member that is someone's key) go by text. The rows live as long as this call,
      // as the batch does: a key's Buffer is the batch's own, not a copy.
      const rows = new Map<string, PackedRow>();
      const byObject = new Map<unknown, PackedRow>();
      const idOf = (account: unknown, k: Buffer) => `${account as string}\u0000${k.toString('latin1')}`;
      // Keys the file does not hold: not read for (most of a new person's rows).
      for (const [account, key] of write.fresh ?? []) {
        const k = bufferOf(key);
        const id = idOf(account, k);
        // One row for the bytes, however many objects name them.
        let row = rows.get(id);
        if (row === undefined) rows.set(id, (row = emptyRow(account as string, k)));
        byObject.set(key, row);
      }
      const rowOf = (account: unknown, key: unknown) => {
        let row = byObject.get(key);
        if (row !== undefined && row.account === account) return row;
        const k = bufferOf(key);
        const id = idOf(account, k);
        row = rows.get(id);
        if (row === undefined) rows.set(id, (row = read(account as string, k) ?? emptyRow(account as string, k)));
        byObject.set(key, row);
        return row;
      };
      for (const [account, key, first, last, country, latitude, longitude, radiusKm, asn, anonymous] of write.keys) {
        const row = rowOf(account, key);
        row.firstSeen = first as number;
        row.lastSeen = last as number;
        row.country = country as string | null;
        row.latitude = latitude as number | null;
        row.longitude = longitude as number | null;
        row.radiusKm = radiusKm as number | null;
        row.asn = asn as number | null;
        row.anonymous = anonymous as number | null;
      }
      for (const [account, key, grain, bucket, n] of write.counts) rowOf(account, key).counts.set(cellOf(grain as number, bucket as number), n as number);
      for (const [account, key, kind, member] of write.evicted) rowOf(account, key).members.delete((kind as string) + bufferOf(member).toString('latin1'));
      for (const [account, key, kind, member, seen] of write.members) {
        const m = bufferOf(member);
        const { members } = rowOf(account, key);
        const k = (kind as string) + m.toString('latin1');
        // The main thread sends every member an identifier holds (history-sqlite.ts takeBatch): one
        // the row has already, seen at the same time, changes nothing, and its reverse entry (or,
        // past REVERSE_KEEP, the overflow mark) was written with it, so the member's own row is not
        // read for it. A shared address's ~100 members would otherwise be ~100 rows read and
        // rewritten a write-back.
        if (members.get(k) === seen) continue;
        // Past what this file's last prune kept (HISTORY_DAYS): the main thread may still hold a
        // member its prune passed over (an identifier waiting to be written), and sends all it
        // holds. Not written back, nor its reverse entry: pruned stays pruned.
        if ((seen as number) < prunedBefore) continue;
        members.set(k, seen as number);
        if (kind === SET_ACCOUNTS) addReverse(rowOf(account, m).reverse, bufferOf(key).toString('latin1'), seen as number);
      }
      for (const row of rows.values()) {
        dropStaleCounts(row);
        save(row);
      }
      for (const r of write.velocity) upsertVelocity.run(r);
      return rows.size + write.velocity.length;
    },

    /**
     * Up to `limit` rows with something older than `before`: what is past HISTORY_DAYS goes (the
     * identifier's own columns if its last event is, members, reverse entries), and with them
     * counters no window reads after `minute` and `hour` (the last buckets none reads). A row left
     * with nothing but counters is deleted: none of them is in a window then (they came with events
     * older than `before`).
     */
    prune(before: number, minute: number, hour: number, limit: number): PackedPrune {
      prunedBefore = Math.max(prunedBefore, before);
      const found = stale.all(before, limit) as StoredRow[];
      let removed = 0;
      for (const stored of found) {
        let row: PackedRow;
        try {
          row = fromStored(stored);
        } catch {
          // Not a row this code wrote (a damaged file): unreadable history is no history, and left
          // here it would be the first of every batch and stop pruning.
          remove.run(stored.rowid);
          removed += 1;
          continue;
        }
        removed += dropSeenBefore(row.members, before) + dropSeenBefore(row.reverse, before);
        if (row.lastSeen !== null && row.lastSeen < before) {
          Object.assign(row, { firstSeen: null, lastSeen: null, country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: null });
          removed += 1;
        }
        removed += dropCountsBefore(row, minute, hour);
        if (row.firstSeen === null && row.members.size === 0 && row.reverse.size === 0) {
          removed += row.counts.size;
          row.counts.clear();
        }
        save(row);
      }
      return { removed, rows: found.length };
    },

    /**
     * Everything under the person's keys (the identifier, its counters and sets, velocity counters
     * under it and under the devices of its devices set: a device counter is the person's), and the
     * person among the accounts sets of every address and device their reverse entries name.
     */
    erase(account: string, keys: Uint8Array[]): ErasedHistory {
      const counts: ErasedHistory = { identifiers: 0, counters: 0, memberships: 0 };
      for (const k of keys) {
        const key = bufferOf(k);
        const row = read(account, key);
        counts.counters += eraseVelocity.run(account, key).changes;
        if (row === null) continue;
        if (row.firstSeen !== null) counts.identifiers += 1;
        counts.counters += row.counts.size;
        counts.memberships += row.members.size;
        const member = SET_ACCOUNTS + key.toString('latin1');
        row.members.forEach((_seen, m) => {
          // A device shared with others loses their counts too: erasure errs on forgetting.
          if (m.charCodeAt(0) === SET_DEVICES.charCodeAt(0)) counts.counters += eraseVelocity.run(account, Buffer.from(m.slice(1), 'latin1')).changes;
        });
        const leave = (set: PackedRow | null) => {
          if (set === null || !set.members.delete(member)) return;
          counts.memberships += 1;
          save(set);
        };
        // Past REVERSE_KEEP entries, not every set holding the person is named: every one is looked at.
        if (row.reverse.has(OVERFLOW)) {
          const pattern = Buffer.concat([Buffer.from([SET_ACCOUNTS.charCodeAt(0), key.length]), key]);
          for (const stored of scanSets.all(account, pattern) as StoredRow[]) leave(fromStored(stored));
        } else {
          row.reverse.forEach((_seen, holder) => leave(read(account, Buffer.from(holder, 'latin1'))));
        }
        remove.run(row.rowid);
      }
      return counts;
    },
  };
}

/**
 * A person's devices (the devices set under their key), for the main thread to hold their velocity
 * counters as empty while they are erased.
 */
export function devicesIn(cells: Uint8Array | null): Buffer[] {
  const devices: Buffer[] = [];
  const d = SET_DEVICES.charCodeAt(0);
  forEachCell(cells, () => undefined, (kind, b, start, end) => {
    if (kind === d) devices.push(Buffer.from(b.subarray(start, end)));
  });
  return devices;
}

/**
 * Erasure with history off now (HISTORY_DAYS=0): what an earlier setting kept in the file, erased
 * as the writer thread erases it, on a connection of its own for the one transaction. It waits for
 * the file's write lock (the log's writer thread may hold it) at most `busyTimeoutMs`, on the event
 * loop as every better-sqlite3 call does: the serving connection's bound.
 */
export function erasePackedFile(path: string, busyTimeoutMs: number, account: string, keys: Uint8Array[]): ErasedHistory {
  const sqlite = new Sqlite(path, { timeout: busyTimeoutMs });
  try {
    const packed = packedHistory(sqlite);
    return sqlite.transaction(() => packed.erase(account, keys)).immediate();
  } finally {
    sqlite.close();
  }
}
