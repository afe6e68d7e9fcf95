import Sqlite from 'better-sqlite3';
import { mapClock, type ClockVerdict } from '../core/map-clock.js';
import { GRAIN_HOUR, GRAIN_MINUTE, HOURS_IN_WINDOW, MINUTES_IN_WINDOW, SET_ACCOUNTS, SET_COUNTRIES, SET_DEVICES, SET_KEEP } from '../history/caps.js';
import { HOUR_MS, MINUTE_MS } from '../history/caps.js';
import type { HistoryEvent, Prior, SetReading } from '../history/event.js';
import type { Place } from '../history/place.js';
import type { ErasedHistory, HistoryStore } from '../history/store.js';
import { pruneBounds, PRUNE_BATCH, type HistoryMaintenanceOptions } from './history-maintenance.js';
import { SQLITE_HISTORY_READS } from './history-sql.js';
import { keyFilter, type KeyFilter } from './history-key-filter.js';
import { HistoryBatchEncoder } from './history-batch.js';
import type { SqliteWriterThread } from './sqlite-log-writer.js';
import type { HistoryPackedRow } from './schema.js';
import { devicesIn, forEachCell, PACKED_SQL } from './history-packed.js';

/**
 * SQLite: the process is the store's only writer (README "Store": SQLite is for one process), so
 * the history it has touched lately is held in memory, and memory is the truth. An evaluation
 * reads and updates its identifiers there, synchronously; an identifier not in memory is read
 * from the file first (one row, its cells packed: history-packed.ts, migration 19; WAL readers
 * never wait for the writer), unless the key
 * filter (history-key-filter.ts, loaded when the store opens) says the file cannot hold it: a new
 * person costs no read of the file. Changes are
 * written back in batches by the writer thread the evaluation log uses, so the request path never
 * waits for the write lock. An identifier with changes not yet written stays in memory until they
 * are; the others are evicted, least recently used first (near enough: see `evict`), past the bounds below. When the writer falls so far
 * behind that unwritten identifiers alone hold memory past a bound, an event is not recorded at all
 * (`record` answers null: the evaluation goes without history) until the writer catches up, so
 * memory never grows past the bounds by more than one event's identifiers.
 */
export interface SqliteHistoryOptions extends HistoryMaintenanceOptions {
  path: string;
  thread: SqliteWriterThread;
  /** A write-back failed: the store is not working. */
  onWriteError: (error: Error) => void;
  maxEntries?: number;
  maxBytes?: number;
  keepBytes?: number;
  flushDelayMs?: number;
  flushBatch?: number;
  /** The identifiers the file may hold; by default loaded from it when the store opens. */
  filter?: KeyFilter;
}

export const SQLITE_HISTORY_DEFAULTS = {
  /** Identifiers held in memory, and their estimated bytes: whichever bound is reached first. */
  maxEntries: 100_000,
  maxBytes: 64 * 2 ** 20,
  /**
   * Estimated bytes of identifiers kept once written back: eviction brings memory down to this, the
   * bounds above are the room for changes waiting on a writer behind. Kept to 64 MiB, history was
   * the largest part of the service's live heap (under `--max-old-space-size=224`) with new people
   * streaming in, and the p99 grew round after round (bench/rounds.ts --mix new, six rounds of
   * 10 s: 144 → 233 ms). A person met again after eviction costs a read of the file per identifier.
   */
  keepBytes: 16 * 2 ** 20,
  flushDelayMs: 50,
  /** Identifiers written back per transaction (one message), FLUSH_IN_FLIGHT messages at most in flight. */
  flushBatch: 500,
} as const;

/** Write-back messages sent and not yet answered, at most (see `flush`). */
const FLUSH_IN_FLIGHT = 4;

/** A read waits at most this long for a lock (only a checkpoint's brief one, in WAL mode). */
const READ_BUSY_TIMEOUT_MS = 20;

interface KeyState {
  id: string;
  account: string;
  key: Buffer;
  firstSeen: number | null;
  lastSeen: number | null;
  place: Place | null;
  /** grain * 1e9 + bucket → events. */
  counts: Map<number, number>;
  /** Its set members, all kinds in one Map: kind + member hex → last seen. */
  members: Map<string, number>;
  /** Members held of each kind (SET_ACCOUNTS, SET_DEVICES, SET_COUNTRIES). */
  accounts: number;
  devices: number;
  countries: number;
  /**
   * Members the set no longer keeps, as `members` keyed them, until written back (null until
   * then). What else changed is not marked one by one: a write-back sends all that the identifier
   * holds (see `takeBatch`), if an event changed any of it (`cellsChanged`).
   */
  evicted: string[] | null;
  /** An event counted it, touched a member or saw it since its last write-back: not a velocity counter alone. */
  cellsChanged: boolean;
  /** Write-backs sent and not yet answered. */
  inFlight: number;
  bytes: number;
  /** The last event that touched it (or when it was read), for pruning memory as the file is pruned. */
  touchedAt: number;
  /** Touched since the last eviction pass walked past it: that pass keeps it (see `evict`). */
  recent: boolean;
  /**
   * Velocity counters under this key (history/velocity.ts): series → bucket → events and the minute
   * it expires. Null until a counter first reads or counts it (then read from the file, if `velocityInFile`).
   */
  velocity: Map<string, Map<number, VelocityCell>> | null;
  /** The file may hold velocity cells of this key not read yet: false for a key never seen, or being erased. */
  velocityInFile: boolean;
  /** Not in the file (the key filter said so) and not yet sent to be written: its write-back inserts without a read. */
  fresh: boolean;
  /** series + '\u0000' + bucket */
  dirtyVelocity: Set<string> | null;
}

/** A row of `history_packed` as the reader selects it (PACKED_SQL.read: its key's columns and reverse entries left out). */
type PackedReadRow = Omit<HistoryPackedRow, 'account_id' | 'key' | 'reverse' | 'oldest'>;

interface VelocityCell {
  n: number;
  expires: number;
}

/** Past this share of either bound, every event evicts a little (see `evict`). */
const EVICT_TO = 0.9;
/** Identifiers the eviction cursor walks over per event, at most: an event adds four, and a few velocity keys. */
const EVICT_STEP = 32;

const cell = (grain: number, bucket: number) => grain * 1e9 + bucket;
/** A set member as an identifier's `members` keys it: the kind's character, then the member in hex. */
const memberKey = (kind: string, member: Buffer) => kind + member.toString('hex');
/**
 * Heap bytes per identifier, its counters and its set members, as V8 holds them (Node 24): the
 * history review measured ~1,335 bytes per identifier at steady state (heap used after GC over
 * 100,000 identifiers, half with 2 counters and 1 member, half with 1 counter); these constants
 * give 1,320 for that mix, so the documented 64 MiB bound is a real one. That was when an
 * identifier held sets of its changes, made on every event (at the bound, ~35 MB more heap in
 * bench/history-step.ts than once they were made only when needed), and a Map for each kind of
 * set; it now holds neither (KeyState), so these over-estimate, on the safe side.
 */
const BASE_BYTES = 1_150;
const MEMBER_BYTES = 160;
const COUNT_BYTES = 60;

export function sqliteHistory(options: SqliteHistoryOptions): HistoryStore {
  const o = { ...SQLITE_HISTORY_DEFAULTS, ...options };
  const reader = new Sqlite(o.path, { timeout: READ_BUSY_TIMEOUT_MS });
  const selectRow = reader.prepare(PACKED_SQL.read);
  const selectVelocity = reader.prepare(SQLITE_HISTORY_READS.velocity);
  const selectCells = reader.prepare(PACKED_SQL.cells).pluck();

  const known: KeyFilter = o.filter ?? loadKeyFilter(reader);
  const cache = new Map<string, KeyState>();
  const dirty = new Set<KeyState>();
  let bytes = 0;
  let failed = 0;
  let refused = 0;
  let pruned = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | null = null;
  let closed = false;
  /** The prune running, if one is: one at a time, and close() waits for it (its batches go to the writer thread, released after). */
  let pruning: Promise<number> | null = null;
  /** Being erased: read as empty from the file until the writer thread has deleted them. */
  const erasingKeys = new Set<string>();
  const erasingMembers = new Set<string>();
  /** Devices of a person being erased: their velocity counters read as empty until the file's are deleted. */
  const erasingVelocity = new Set<string>();

  const load = (account: string, key: Buffer, id: string, minute: number, hour: number): KeyState => {
    const state: KeyState = {
      id, account, key, firstSeen: null, lastSeen: null, place: null, counts: new Map(), members: new Map(), accounts: 0, devices: 0, countries: 0,
      evicted: null, cellsChanged: false, inFlight: 0, bytes: BASE_BYTES, touchedAt: 0, recent: false,
      velocity: null, velocityInFile: true, dirtyVelocity: null, fresh: false,
    };
    if (erasingKeys.has(id)) {
      // Whatever it gets now is written to the file: the filter must know the key.
      known.add(key);
      state.velocityInFile = false;
      return state;
    }
    // Never seen: nothing to read. From now on it may be in the file (its write-back is coming).
    if (!known.mayHave(key)) {
      known.add(key);
      state.velocityInFile = false;
      state.fresh = true;
      return state;
    }
    const row = selectRow.get(account, key) as PackedReadRow | undefined;
    if (row === undefined) return state;
    if (row.first_seen !== null) {
      state.firstSeen = row.first_seen;
      state.lastSeen = row.last_seen;
      state.place = { country: row.country, latitude: row.latitude, longitude: row.longitude, radiusKm: row.radius_km, asn: row.asn, anonymous: row.anonymous === null ? null : row.anonymous === 1 };
    }
    forEachCell(row.cells, (grain, bucket, n) => {
      // Counters out of their window (not pruned yet) are left out, as no window reads them.
      if (grain === GRAIN_MINUTE ? bucket <= minute - MINUTES_IN_WINDOW : bucket <= hour - HOURS_IN_WINDOW) return;
      state.counts.set(cell(grain, bucket), n);
      state.bytes += COUNT_BYTES;
    }, (code, b, start, end, seen) => {
      const kind = String.fromCharCode(code);
      const hex = b.toString('hex', start, end);
      if (kind === SET_ACCOUNTS && erasingMembers.has(`${account}\u0000${hex}`)) return;
      state.members.set(kind + hex, seen);
      resize(state, kind, 1);
      state.bytes += MEMBER_BYTES;
    });
    return state;
  };

  const stateOf = (account: string, key: Buffer, event: Pick<HistoryEvent, 'minute' | 'hour' | 'at'>): KeyState => {
    const id = `${account}\u0000${key.toString('hex')}`;
    let state = cache.get(id);
    if (state === undefined) {
      state = load(account, key, id, event.minute, event.hour);
      bytes += state.bytes;
      cache.set(id, state);
    } else {
      // Marked, not moved: a delete and a set per hit grew the Map's chains of deleted slots, and
      // a hot identifier's look-up slowed with every event (bench/rounds.ts: 0.2 ms an evaluation
      // at 60,000 identifiers held). The eviction pass moves what is marked.
      state.recent = true;
    }
    state.touchedAt = Math.max(state.touchedAt, event.at);
    return state;
  };

  /** The key's velocity cells, read from the file the first time a counter needs them. */
  const velocityOf = (state: KeyState, minute: number) => {
    if (state.velocity !== null) return state.velocity;
    const velocity = new Map<string, Map<number, VelocityCell>>();
    state.velocity = velocity;
    if (!state.velocityInFile || erasingVelocity.has(state.id)) return velocity;
    state.velocityInFile = false;
    for (const r of selectVelocity.all(state.account, state.key, minute) as Array<{ series: string; bucket: number; n: number; expires: number }>) {
      let cells = velocity.get(r.series);
      if (cells === undefined) velocity.set(r.series, (cells = new Map()));
      cells.set(r.bucket, { n: r.n, expires: r.expires });
      state.bytes += COUNT_BYTES;
      bytes += COUNT_BYTES;
    }
    return velocity;
  };

  /** Events of one series in buckets (from, to]; cells no window reads any more are forgotten (the file's are pruned). */
  const velocitySum = (state: KeyState, series: string, from: number, to: number, minute: number) => {
    const cells = velocityOf(state, minute).get(series);
    if (cells === undefined) return 0;
    let total = 0;
    for (const [bucket, c] of cells) {
      if (c.expires <= minute) {
        cells.delete(bucket);
        state.dirtyVelocity?.delete(`${series}\u0000${bucket}`);
        state.bytes -= COUNT_BYTES;
        bytes -= COUNT_BYTES;
      } else if (bucket > from && bucket <= to) {
        total += c.n;
      }
    }
    return total;
  };

  const velocityCount = (state: KeyState, series: string, bucket: number, expires: number, minute: number) => {
    const velocity = velocityOf(state, minute);
    let cells = velocity.get(series);
    if (cells === undefined) velocity.set(series, (cells = new Map()));
    const c = cells.get(bucket);
    if (c === undefined) {
      cells.set(bucket, { n: 1, expires });
      state.bytes += COUNT_BYTES;
      bytes += COUNT_BYTES;
    } else {
      c.n += 1;
      c.expires = Math.max(c.expires, expires);
    }
    (state.dirtyVelocity ??= new Set()).add(`${series}\u0000${bucket}`);
    markDirty(state);
  };

  const sizeOf = (state: KeyState, kind: string) => (kind === SET_ACCOUNTS ? state.accounts : kind === SET_DEVICES ? state.devices : kind === SET_COUNTRIES ? state.countries : 0);
  const resize = (state: KeyState, kind: string, by: number) => {
    if (kind === SET_ACCOUNTS) state.accounts += by;
    else if (kind === SET_DEVICES) state.devices += by;
    else if (kind === SET_COUNTRIES) state.countries += by;
  };

  // forEach, not for-of over entries: a for-of makes an [key, value] array per entry, and the
  // shared address's 84 counters and ~100 accounts are walked on every event (bench/allocations.ts:
  // 7 KB a new person in touch() alone).
  const sum = (state: KeyState, grain: number, from: number, to: number) => {
    let total = 0;
    state.counts.forEach((n, c) => {
      const bucket = c - grain * 1e9;
      if (bucket > from && bucket <= to) total += n;
      else if (bucket >= 0 && bucket < 1e9 && bucket <= from) {
        // Out of its window for good: forgotten (the file's copy is pruned off the request path).
        state.counts.delete(c);
        state.bytes -= COUNT_BYTES;
        bytes -= COUNT_BYTES;
      }
    });
    return total;
  };

  /** `km`: the member as `members` keys it (`memberKey`), or null. */
  const reading = (state: KeyState, kind: string, km: string | null, since: number): SetReading => {
    const size = sizeOf(state, kind);
    if (size === 0) return { count: 0, current: null };
    let count = 0;
    if (size === state.members.size) {
      // The only kind it holds (an address's or a device's accounts, an e-mail address's devices).
      state.members.forEach((seen) => {
        if (seen >= since) count += 1;
      });
    } else {
      const code = kind.charCodeAt(0);
      state.members.forEach((seen, km) => {
        if (seen >= since && km.charCodeAt(0) === code) count += 1;
      });
    }
    return { count: Math.min(count, SET_KEEP), current: km === null ? null : (state.members.get(km) ?? null) };
  };

  const markDirty = (state: KeyState) => {
    dirty.add(state);
  };

  const count = (state: KeyState, grain: number, bucket: number) => {
    const c = cell(grain, bucket);
    const before = state.counts.get(c);
    state.counts.set(c, (before ?? 0) + 1);
    if (before === undefined) {
      state.bytes += COUNT_BYTES;
      bytes += COUNT_BYTES;
    }
    state.cellsChanged = true;
    markDirty(state);
  };

  const touch = (state: KeyState, kind: string, km: string, at: number) => {
    const { members } = state;
    const before = members.get(km);
    members.set(km, Math.max(before ?? at, at));
    if (before === undefined) {
      state.bytes += MEMBER_BYTES;
      bytes += MEMBER_BYTES;
      resize(state, kind, 1);
      // The set keeps its most recent members only (as PostgreSQL's statement trims it).
      if (sizeOf(state, kind) > SET_KEEP + 1) {
        const code = kind.charCodeAt(0);
        let oldest: string | null = null;
        let oldestSeen = Infinity;
        members.forEach((seen, m) => {
          if (seen < oldestSeen && m !== km && m.charCodeAt(0) === code) {
            oldest = m;
            oldestSeen = seen;
          }
        });
        members.delete(oldest!);
        (state.evicted ??= []).push(oldest!);
        resize(state, kind, -1);
        state.bytes -= MEMBER_BYTES;
        bytes -= MEMBER_BYTES;
      }
    }
    state.cellsChanged = true;
    markDirty(state);
  };

  const seenAt = (state: KeyState, at: number, place: Place | null) => {
    state.firstSeen = state.firstSeen === null ? at : Math.min(state.firstSeen, at);
    if (state.lastSeen === null || at >= state.lastSeen) {
      state.lastSeen = at;
      state.place = place;
    }
    state.cellsChanged = true;
    markDirty(state);
  };

  /**
   * Eviction is a second-chance clock over the Map's insertion order (src/core/map-clock.ts): an
   * identifier touched since the cursor last passed it moves to the newest end, unmarked, instead
   * of going. Once memory is past EVICT_TO of a bound, or past keepBytes if that is lower, every
   * event moves the cursor over at most EVICT_STEP identifiers (more than an event adds), down to
   * keepBytes (and EVICT_TO of the entries), so memory stays under the bounds with a few
   * microseconds per event, never a pass over thousands at once (bench/rounds.ts: such a pass held
   * the event loop for milliseconds, in the stalls behind the new-person mix's p99). Should memory
   * still be past a bound (identifiers waiting to be written cannot go), a whole pass runs, down to
   * EVICT_TO of both.
   */
  const clock = mapClock(cache, (_id, state): ClockVerdict => {
    if (dirty.has(state) || state.inFlight > 0) return 'skip';
    if (state.recent) {
      // Met again by the cursor, unmarked, if everything held is recent.
      state.recent = false;
      return 'again';
    }
    bytes -= state.bytes;
    return 'evict';
  });
  const evictSome = (limit: number, entries: number, heldBytes: number) => clock(limit, () => cache.size > entries || bytes > heldBytes);
  const evict = () => {
    const entries = o.maxEntries * EVICT_TO;
    const heldBytes = o.maxBytes * EVICT_TO;
    const keptBytes = Math.min(o.keepBytes, heldBytes);
    if (cache.size <= entries && bytes <= keptBytes) return;
    if (cache.size <= o.maxEntries && bytes <= o.maxBytes) return evictSome(EVICT_STEP, entries, keptBytes);
    evictSome(Infinity, entries, heldBytes);
  };

  const schedule = () => {
    if (timer !== undefined || flushing !== null || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, o.flushDelayMs);
    timer.unref();
  };

  /**
   * Takes the changes of up to `flushBatch` identifiers out of memory's dirty set, as one binary
   * batch (history-batch.ts): all that each holds, changed or not, if an event changed any of it
   * (its velocity cells, marked one by one, alone otherwise). The writer sets each counter and the
   * identifier's columns as they are, and passes over a member its row has with the same time
   * (history-packed.ts). Most identifiers are new people's, all of them changed; a shared
   * address's set is written whole (~100 members), once a write-back, for ~100 people's events.
   * Marking each change instead took two Sets an identifier and a look-up a change: ~15 % of the
   * history's own main-thread time in a profile of the new-person mix. A write-back the writer
   * refuses is not sent again as such, but the identifier's next one carries all it holds.
   */
  const takeBatch = (): { states: KeyState[]; batch: Uint8Array } => {
    const states: KeyState[] = [];
    // ~150 bytes a new person's identifier takes, ~30 a member of a shared address's set (it grows).
    const batch = new HistoryBatchEncoder(Math.min(dirty.size, o.flushBatch) * 160);
    for (const state of dirty) {
      if (states.length >= o.flushBatch) break;
      dirty.delete(state);
      states.push(state);
      state.inFlight += 1;
      batch.subject(state.account, state.key, state.fresh);
      state.fresh = false;
      const cells = state.cellsChanged;
      state.cellsChanged = false;
      if (cells && state.firstSeen !== null && state.lastSeen !== null) {
        const p = state.place;
        batch.key({
          firstSeen: state.firstSeen, lastSeen: state.lastSeen, country: p?.country ?? null, latitude: p?.latitude ?? null, longitude: p?.longitude ?? null,
          radiusKm: p?.radiusKm ?? null, asn: p?.asn ?? null, anonymous: p === null || p.anonymous === null ? null : p.anonymous ? 1 : 0,
        });
      }
      if (cells) {
        // Counters out of the window of the key's latest event are forgotten, not written: the
        // file may have dropped them already (history-packed.ts), and no window reads them. (An
        // event sums each grain it counts first, which forgets them too: this is the guard.)
        const minuteFrom = Math.floor(state.touchedAt / MINUTE_MS) - MINUTES_IN_WINDOW;
        const hourFrom = Math.floor(state.touchedAt / HOUR_MS) - HOURS_IN_WINDOW;
        state.counts.forEach((n, c) => {
          const grain = c >= 2e9 ? GRAIN_HOUR : GRAIN_MINUTE;
          const bucket = c - grain * 1e9;
          if (bucket <= (grain === GRAIN_HOUR ? hourFrom : minuteFrom)) {
            state.counts.delete(c);
            state.bytes -= COUNT_BYTES;
            bytes -= COUNT_BYTES;
            return;
          }
          // The key's latest event, within the bucket (an event of a later bucket may have touched it since).
          batch.count(grain, bucket, n, Math.min(state.touchedAt, (bucket + 1) * (grain === GRAIN_HOUR ? HOUR_MS : MINUTE_MS) - 1));
        });
        state.members.forEach((seen, km) => batch.keyedMember(km, seen));
      }
      if (state.evicted !== null) for (const km of state.evicted) batch.keyedEvicted(km);
      for (const sb of state.dirtyVelocity ?? []) {
        const at = sb.indexOf('\u0000');
        const series = sb.slice(0, at);
        const bucket = Number(sb.slice(at + 1));
        const c = state.velocity?.get(series)?.get(bucket);
        if (c !== undefined) batch.velocity(series, bucket, c.n, c.expires);
      }
      state.dirtyVelocity = null;
      state.evicted = null;
    }
    return { states, batch: batch.finish() };
  };

  /**
   * Writes back all that is dirty, a batch of `flushBatch` identifiers a message, up to
   * FLUSH_IN_FLIGHT messages at once (the writer answers in order), one batch built per turn of the
   * event loop: the rows of 2,000 identifiers built and cloned at once held the loop for
   * milliseconds, and one batch in flight at a time left the writer idle while its answer waited
   * for the busy main thread.
   */
  function flush(): Promise<void> {
    flushing ??= (async () => {
      const sent: Array<Promise<void>> = [];
      while (dirty.size > 0 || sent.length > 0) {
        if (dirty.size > 0 && sent.length < FLUSH_IN_FLIGHT) {
          const { states, batch } = takeBatch();
          sent.push(o.thread.send({ type: 'history', batch }, [batch.buffer as ArrayBuffer]).then(
            () => undefined,
            (error: unknown) => {
              // Not retried, and counted: what this batch held stays in memory, and the identifier's
              // next write-back (once an event changes it) carries all it holds again. Trimmed
              // members and velocity cells it held are not sent again.
              failed += states.length;
              o.onWriteError(error as Error);
            },
          ).finally(() => {
            for (const state of states) state.inFlight -= 1;
          }));
          // The next batch on a later turn: requests run in between.
          if (dirty.size > 0 && sent.length < FLUSH_IN_FLIGHT) await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        await sent.shift();
      }
    })().finally(() => {
      flushing = null;
      evict();
    });
    return flushing;
  }

  /** Over a bound after eviction: only identifiers waiting to be written are left to hold memory. */
  const full = () => cache.size > o.maxEntries || bytes > o.maxBytes;

  return {
    synchronous: true,
    record(event: HistoryEvent): Prior | null {
      if (full()) {
        // The writer is behind: not recorded (memory would grow), answered without history.
        refused += 1;
        return null;
      }
      const { account } = event;
      const ip = stateOf(account, event.ip, event);
      const email = stateOf(account, event.email, event);
      const device = event.device === null ? null : stateOf(account, event.device, event);
      const user = event.user === null ? null : stateOf(account, event.user, event);
      const minuteFrom = event.minute - MINUTES_IN_WINDOW;
      const hourFrom = event.hour - HOURS_IN_WINDOW;
      // Each member as the sets key it, made once: an event reads and touches each in two sets, and
      // the one string's hash is computed once for the four look-ups.
      const identityMember = memberKey(SET_ACCOUNTS, event.identity);
      const deviceMember = event.device === null ? null : memberKey(SET_DEVICES, event.device);
      const countryMember = event.country === null ? null : memberKey(SET_COUNTRIES, event.country);

      const prior: Prior = {
        ip: { minutes: sum(ip, GRAIN_MINUTE, minuteFrom, event.minute), hours: sum(ip, GRAIN_HOUR, hourFrom, event.hour), accounts: reading(ip, SET_ACCOUNTS, identityMember, event.since24h) },
        email: { hours: sum(email, GRAIN_HOUR, hourFrom, event.hour), firstSeen: email.firstSeen, devices: reading(email, SET_DEVICES, deviceMember, event.since30d) },
        device: device === null ? null : {
          minutes: sum(device, GRAIN_MINUTE, minuteFrom, event.minute),
          firstSeen: device.firstSeen,
          accounts: reading(device, SET_ACCOUNTS, identityMember, event.since30d),
        },
        user: user === null ? null : {
          firstSeen: user.firstSeen,
          lastSeen: user.lastSeen,
          place: user.lastSeen === null ? null : user.place,
          devices: reading(user, SET_DEVICES, deviceMember, event.since30d),
          countries: reading(user, SET_COUNTRIES, countryMember, event.since24h),
          // Memory holds members within HISTORY_DAYS (prune() forgets the older, as the file does).
          baseline: { devices: user.devices > 0, countries: user.countries > 0 },
        },
        velocity: [],
      };
      const velocity = event.velocity;
      if (velocity !== null) {
        // Counters share a few keys (the step hands the same Buffer for the same key): each looked up once.
        const states = new Map<Buffer, KeyState>();
        const at = (key: Buffer) => {
          let state = states.get(key);
          if (state === undefined) states.set(key, (state = stateOf(account, key, event)));
          return state;
        };
        // Every read before any count: what came before the event.
        for (const read of velocity.reads) prior.velocity.push(read.key === null ? 0 : velocitySum(at(read.key), read.series, read.from, read.to, event.minute));
        for (const c of velocity.counts) velocityCount(at(c.key), c.series, c.bucket, c.expires, event.minute);
      }

      count(ip, GRAIN_MINUTE, event.minute);
      count(ip, GRAIN_HOUR, event.hour);
      touch(ip, SET_ACCOUNTS, identityMember, event.at);
      count(email, GRAIN_HOUR, event.hour);
      seenAt(email, event.at, null);
      if (device !== null) {
        count(device, GRAIN_MINUTE, event.minute);
        touch(device, SET_ACCOUNTS, identityMember, event.at);
        seenAt(device, event.at, null);
        touch(email, SET_DEVICES, deviceMember!, event.at);
      }
      if (user !== null) {
        if (deviceMember !== null) touch(user, SET_DEVICES, deviceMember, event.at);
        if (countryMember !== null) touch(user, SET_COUNTRIES, countryMember, event.at);
        seenAt(user, event.at, event.place);
      }
      if (dirty.size >= o.flushBatch && flushing === null) {
        clearTimeout(timer);
        timer = undefined;
        void flush();
      } else {
        schedule();
      }
      evict();
      return prior;
    },

    countAfter(account, counts, at) {
      if (counts.length === 0) return;
      if (full()) {
        refused += 1;
        return;
      }
      const when = { at, minute: Math.floor(at / MINUTE_MS), hour: Math.floor(at / HOUR_MS) };
      for (const c of counts) velocityCount(stateOf(account, c.key, when), c.series, c.bucket, c.expires, when.minute);
      schedule();
      evict();
    },

    async erase(account, keys) {
      // What memory holds goes to the file first, so the counts answered are all there was.
      await flush();
      const ids = keys.map((key) => `${account}\u0000${key.toString('hex')}`);
      // The person's devices (from the file, now that memory is written): their velocity counters go too.
      const devices = keys.flatMap((key) => devicesIn((selectCells.get(account, key) as Buffer | null | undefined) ?? null)).map((d) => `${account}\u0000${d.toString('hex')}`);
      for (const id of devices) {
        erasingVelocity.add(id);
        const state = cache.get(id);
        if (state?.velocity) {
          for (const cells of state.velocity.values()) {
            state.bytes -= COUNT_BYTES * cells.size;
            bytes -= COUNT_BYTES * cells.size;
          }
          state.velocity = new Map();
          state.dirtyVelocity = null;
        }
      }
      const members = keys.map((key) => key.toString('hex'));
      for (const id of ids) erasingKeys.add(id);
      for (const hex of members) erasingMembers.add(`${account}\u0000${hex}`);
      for (const id of ids) {
        const state = cache.get(id);
        if (state === undefined) continue;
        cache.delete(id);
        dirty.delete(state);
        bytes -= state.bytes;
      }
      // The person among the accounts of IPs and devices held in memory.
      for (const state of cache.values()) {
        if (state.account !== account) continue;
        if (state.accounts === 0) continue;
        for (const hex of members) {
          const km = SET_ACCOUNTS + hex;
          if (state.members.delete(km)) {
            state.accounts -= 1;
            state.bytes -= MEMBER_BYTES;
            bytes -= MEMBER_BYTES;
          }
        }
      }
      try {
        // After every write-back sent before it: the writer thread answers in order.
        const reply = await o.thread.send({ type: 'history-erase', account, keys });
        return reply.counts as unknown as ErasedHistory;
      } finally {
        for (const id of ids) erasingKeys.delete(id);
        for (const hex of members) erasingMembers.delete(`${account}\u0000${hex}`);
        for (const id of devices) erasingVelocity.delete(id);
      }
    },

    prune() {
      if (closed) return Promise.resolve(0);
      pruning ??= (async () => {
        const b = pruneBounds(o.now(), o.historyDays);
        // Memory first (it is the truth): written back, then what is past HISTORY_DAYS forgotten as the file forgets it.
        await flush();
        for (const [id, state] of cache) {
          if (dirty.has(state) || state.inFlight > 0) continue;
          if (state.touchedAt < b.before) {
            cache.delete(id);
            bytes -= state.bytes;
            continue;
          }
          state.members.forEach((seen, km) => {
            if (seen >= b.before) return;
            state.members.delete(km);
            resize(state, km[0]!, -1);
            state.bytes -= MEMBER_BYTES;
            bytes -= MEMBER_BYTES;
          });
        }
        const batch = o.pruneBatch ?? PRUNE_BATCH;
        let total = 0;
        // history_packed's rows with something past HISTORY_DAYS (history-packed.ts), then velocity cells no window reads.
        for (;;) {
          const reply = await o.thread.send({ type: 'history-prune-packed', before: b.before, minute: b.minute, hour: b.hour, limit: batch });
          total += reply.count;
          if ((reply.counts?.rows ?? 0) < batch || closed) break;
        }
        for (;;) {
          if (closed) break;
          const { count: deleted } = await o.thread.send({ type: 'history-prune', statement: 'velocity', values: [b.now, batch] });
          total += deleted;
          if (deleted < batch) break;
        }
        pruned += total;
        return total;
      })().finally(() => {
        pruning = null;
      });
      return pruning;
    },

    stats: () => ({ failed, refused, pruned, cached: cache.size, pending: dirty.size, bytes }),

    async close() {
      closed = true;
      clearTimeout(timer);
      await flushing;
      await flush();
      await pruning?.catch(() => undefined);
      failed += dirty.size;
      reader.close();
      await o.thread.release();
    },
  };
}

/**
 * Every key the history tables hold, into a new filter: one pass over each table, a key with
 * velocity counters added again (harmless).
 */
export function loadKeyFilter(reader: Sqlite.Database): KeyFilter {
  const filter = keyFilter();
  for (const text of ['select key from history_packed', 'select key from history_velocity']) {
    for (const row of reader.prepare(text).raw().iterate() as Iterable<unknown[]>) filter.add(row.at(-1) as Buffer);
  }
  return filter;
}
