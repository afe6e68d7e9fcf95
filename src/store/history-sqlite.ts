import Sqlite from 'better-sqlite3';
import { GRAIN_HOUR, GRAIN_MINUTE, HOURS_IN_WINDOW, MINUTES_IN_WINDOW } from '../history/caps.js';
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
import { bucketOf, cellOf, devicesIn, forEachCell, grainOf, PACKED_SQL } from './history-packed.js';
import { CELLS_CHANGED, COUNT_BYTES, FRESH, HistorySlots, KIND_ACCOUNTS, KIND_CHARS, KIND_COUNTRIES, KIND_DEVICES, kindOf, RECENT, VELOCITY_IN_FILE } from './history-slots.js';

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
  /**
   * Identifiers held in memory, and their estimated bytes: whichever bound is reached first. At
   * ~480 bytes a slot (history-slots.ts) the identifiers are, unless many hold sets past their
   * slot: 100,000 identifiers waiting on a writer behind (a crash loses their changes; ~47,000 when
   * an identifier was an object of ~1,400 bytes).
   */
  maxEntries: 100_000,
  maxBytes: 64 * 2 ** 20,
  /**
   * Estimated bytes of identifiers kept once written back (~35,000 slots: history-slots.ts):
   * eviction brings memory down to this, the bounds above are the room for changes waiting on a
   * writer behind. Kept to 64 MiB (when an identifier was objects of its own), history was
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

/** A row of `history_packed` as the reader selects it (PACKED_SQL.read: its key's columns and reverse entries left out). */
type PackedReadRow = Omit<HistoryPackedRow, 'account_id' | 'key' | 'reverse' | 'oldest'>;

interface VelocityCell {
  n: number;
  expires: number;
}

/** Past this share of either bound, every event evicts a little (see `evict`). */
const EVICT_TO = 0.9;
/** Identifiers the eviction hand looks at per event, at most: an event adds four, and a few velocity keys. */
const EVICT_STEP = 32;
/** Free slots the hand may pass for each identifier it may look at (see `evict`). */
const FREE_PASSED = 8;

/** A slot's time (NaN: none) as the answer has it. */
const orNull = (t: number) => (Number.isNaN(t) ? null : t);

export function sqliteHistory(options: SqliteHistoryOptions): HistoryStore {
  const o = { ...SQLITE_HISTORY_DEFAULTS, ...options };
  const reader = new Sqlite(o.path, { timeout: READ_BUSY_TIMEOUT_MS });
  const selectRow = reader.prepare(PACKED_SQL.read);
  const selectVelocity = reader.prepare(SQLITE_HISTORY_READS.velocity);
  const selectCells = reader.prepare(PACKED_SQL.cells).pluck();

  const known: KeyFilter = o.filter ?? loadKeyFilter(reader);
  const slots = new HistorySlots();
  /** Slots with changes not yet sent to the writer, in the order they changed. */
  const dirty = new Set<number>();
  /**
   * Members a set no longer keeps (kind character + member), until written back; velocity
   * counters under a key (history/velocity.ts): series → bucket → events and the minute it expires,
   * made when a counter first reads or counts the key (then read from the file, if VELOCITY_IN_FILE),
   * and those changed since the last write-back (series + '\u0000' + bucket). Few slots have any.
   */
  const evicted = new Map<number, string[]>();
  const velocity = new Map<number, Map<string, Map<number, VelocityCell>>>();
  const dirtyVelocity = new Map<number, Set<string>>();
  /** The eviction clock's hand: the slot it looks at next (see `evict`). */
  let hand = 0;
  let failed = 0;
  let refused = 0;
  let pruned = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | null = null;
  let closed = false;
  /** The prune running, if one is: one at a time, and close() waits for it (its batches go to the writer thread, released after). */
  let pruning: Promise<number> | null = null;
  /**
   * Being erased, as account + '\u0000' + key as text: read as empty from the file until the writer
   * thread has deleted them, and left out of the accounts sets read meanwhile (a member is a key).
   */
  const erasingKeys = new Set<string>();
  /** Devices of a person being erased: their velocity counters read as empty until the file's are deleted. */
  const erasingVelocity = new Set<string>();
  const idOf = (slot: number) => `${slots.account[slot]!}\u0000${slots.name[slot]!}`;

  /** A slot for a key not held: what the file has of it, unless the key filter says it has nothing. */
  const load = (account: string, key: Buffer, name: string, minute: number, hour: number): number => {
    const slot = slots.take(account, name);
    if (erasingKeys.size > 0 && erasingKeys.has(`${account}\u0000${name}`)) {
      // Whatever it gets now is written to the file: the filter must know the key.
      known.add(key);
      return slot;
    }
    // Never seen: nothing to read. From now on it may be in the file (its write-back is coming).
    if (!known.mayHave(key)) {
      known.add(key);
      slots.flags[slot]! |= FRESH;
      return slot;
    }
    slots.flags[slot]! |= VELOCITY_IN_FILE;
    const row = selectRow.get(account, key) as PackedReadRow | undefined;
    if (row === undefined) return slot;
    if (row.first_seen !== null) {
      slots.firstSeen[slot] = row.first_seen;
      slots.lastSeen[slot] = row.last_seen ?? NaN;
      slots.place[slot] = { country: row.country, latitude: row.latitude, longitude: row.longitude, radiusKm: row.radius_km, asn: row.asn, anonymous: row.anonymous === null ? null : row.anonymous === 1 };
    }
    forEachCell(row.cells, (grain, bucket, n) => {
      // Counters out of their window (not pruned yet) are left out, as no window reads them.
      if (grain === GRAIN_MINUTE ? bucket <= minute - MINUTES_IN_WINDOW : bucket <= hour - HOURS_IN_WINDOW) return;
      slots.count(slot, cellOf(grain, bucket), n);
    }, (code, b, start, end, seen) => {
      const kind = kindOf(String.fromCharCode(code));
      // Only this code's three kinds are written; another (a damaged file) is not held, and stays
      // in the file (a write-back adds to a row's members, it never takes one out unless trimmed).
      if (kind < 0) return;
      const member = b.toString('latin1', start, end);
      if (kind === KIND_ACCOUNTS && erasingKeys.has(`${account}\u0000${member}`)) return;
      slots.put(slot, kind, member, seen);
    });
    return slot;
  };

  const slotOf = (account: string, key: Buffer, event: Pick<HistoryEvent, 'minute' | 'hour' | 'at'>): number => {
    const name = key.toString('latin1');
    let slot = slots.find(account, name);
    if (slot < 0) {
      slot = load(account, key, name, event.minute, event.hour);
    } else {
      // Marked, not moved: the eviction clock passes over it once (see `evict`).
      slots.flags[slot]! |= RECENT;
    }
    slots.touchedAt[slot] = Math.max(slots.touchedAt[slot]!, event.at);
    return slot;
  };

  /** The key's velocity cells, read from the file the first time a counter needs them. */
  const velocityOf = (slot: number, minute: number) => {
    let cells = velocity.get(slot);
    if (cells !== undefined) return cells;
    velocity.set(slot, (cells = new Map()));
    if ((slots.flags[slot]! & VELOCITY_IN_FILE) === 0 || erasingVelocity.has(idOf(slot))) return cells;
    slots.flags[slot]! &= ~VELOCITY_IN_FILE;
    const key = Buffer.from(slots.name[slot]!, 'latin1');
    for (const r of selectVelocity.all(slots.account[slot]!, key, minute) as Array<{ series: string; bucket: number; n: number; expires: number }>) {
      let series = cells.get(r.series);
      if (series === undefined) cells.set(r.series, (series = new Map()));
      series.set(r.bucket, { n: r.n, expires: r.expires });
      slots.addBytes(slot, COUNT_BYTES);
    }
    return cells;
  };

  /** Events of one series in buckets (from, to]; cells no window reads any more are forgotten (the file's are pruned). */
  const velocitySum = (slot: number, series: string, from: number, to: number, minute: number) => {
    const cells = velocityOf(slot, minute).get(series);
    if (cells === undefined) return 0;
    let total = 0;
    for (const [bucket, c] of cells) {
      if (c.expires <= minute) {
        cells.delete(bucket);
        dirtyVelocity.get(slot)?.delete(`${series}\u0000${bucket}`);
        slots.addBytes(slot, -COUNT_BYTES);
      } else if (bucket > from && bucket <= to) {
        total += c.n;
      }
    }
    return total;
  };

  const velocityCount = (slot: number, series: string, bucket: number, expires: number, minute: number) => {
    const all = velocityOf(slot, minute);
    let cells = all.get(series);
    if (cells === undefined) all.set(series, (cells = new Map()));
    const c = cells.get(bucket);
    if (c === undefined) {
      cells.set(bucket, { n: 1, expires });
      slots.addBytes(slot, COUNT_BYTES);
    } else {
      c.n += 1;
      c.expires = Math.max(c.expires, expires);
    }
    let changed = dirtyVelocity.get(slot);
    if (changed === undefined) dirtyVelocity.set(slot, (changed = new Set()));
    changed.add(`${series}\u0000${bucket}`);
    dirty.add(slot);
  };

  /** `member`: the event's own member of the set (its key as text), or null. */
  const reading = (slot: number, kind: number, member: string | null, since: number): SetReading => ({
    count: slots.countSince(slot, kind, since),
    current: member === null ? null : slots.seenOf(slot, kind, member),
  });

  const count = (slot: number, grain: number, bucket: number) => {
    slots.count(slot, cellOf(grain, bucket), 1);
    slots.flags[slot]! |= CELLS_CHANGED;
    dirty.add(slot);
  };

  const touch = (slot: number, kind: number, member: string, at: number) => {
    const trimmed = slots.touch(slot, kind, member, at);
    if (trimmed !== null) {
      const list = evicted.get(slot);
      if (list === undefined) evicted.set(slot, [trimmed]);
      else list.push(trimmed);
    }
    slots.flags[slot]! |= CELLS_CHANGED;
    dirty.add(slot);
  };

  const seenAt = (slot: number, at: number, place: Place | null) => {
    const first = slots.firstSeen[slot]!;
    slots.firstSeen[slot] = Number.isNaN(first) ? at : Math.min(first, at);
    const last = slots.lastSeen[slot]!;
    if (Number.isNaN(last) || at >= last) {
      slots.lastSeen[slot] = at;
      slots.place[slot] = place;
    }
    slots.flags[slot]! |= CELLS_CHANGED;
    dirty.add(slot);
  };

  /** Forgets a slot and what it holds beside its columns. */
  const forget = (slot: number) => {
    evicted.delete(slot);
    velocity.delete(slot);
    dirtyVelocity.delete(slot);
    slots.release(slot);
  };

  /**
   * Eviction is a second-chance clock over the slots (CLOCK): the hand walks them in turn, round and
   * round; an identifier touched since the hand last passed it is unmarked and passed over, one
   * with changes waiting to be written (or being written) is passed over, any other is forgotten,
   * its slot free for a later new identifier (the most recently freed first). Near enough least
   * recently used, without moving anything on a hit. Once memory is past EVICT_TO of a
   * bound, or past keepBytes if that is lower, every event moves the hand over at most EVICT_STEP
   * identifiers held (more than an event adds), down to keepBytes (and EVICT_TO of the entries), so memory stays
   * under the bounds with a few microseconds per event, never a pass over thousands at once
   * (bench/rounds.ts: such a pass held the event loop for milliseconds, in the stalls behind the
   * new-person mix's p99). Free slots the hand passes (left by a burst the writer fell behind in, a
   * prune, an erasure) do not count towards EVICT_STEP, up to FREE_PASSED times as many. Should
   * memory still be past a bound (identifiers waiting to be written cannot go), a whole pass runs
   * (two rounds at most: the first may only unmark), down to EVICT_TO of both.
   */
  const evictSome = (limit: number, entries: number, heldBytes: number) => {
    const positions = Math.min(limit * FREE_PASSED, slots.made * 2);
    let looked = 0;
    for (let walked = 0; walked < positions && looked < limit && (slots.held > entries || slots.bytes > heldBytes); walked++) {
      if (hand >= slots.made) hand = 0;
      const slot = hand++;
      if (!slots.isUsed(slot)) continue;
      looked += 1;
      if (dirty.has(slot) || slots.inFlight[slot]! > 0) continue;
      if ((slots.flags[slot]! & RECENT) !== 0) {
        slots.flags[slot]! &= ~RECENT;
        continue;
      }
      forget(slot);
    }
  };
  const evict = () => {
    const entries = o.maxEntries * EVICT_TO;
    const heldBytes = o.maxBytes * EVICT_TO;
    const keptBytes = Math.min(o.keepBytes, heldBytes);
    if (slots.held <= entries && slots.bytes <= keptBytes) return;
    if (slots.held <= o.maxEntries && slots.bytes <= o.maxBytes) return evictSome(EVICT_STEP, entries, keptBytes);
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
   * refuses is not sent again as such, but the identifier's next one carries all it holds. Each
   * slot taken goes with its generation: one forgotten meanwhile and taken again is not the one the
   * answer is for. (Eviction and pruning pass over slots in flight, and an erasure waits for every
   * write-back first, so none is forgotten in flight today: a guard for the path that one day does.)
   */
  const takeBatch = (): { taken: number[]; generations: number[]; batch: Uint8Array } => {
    const taken: number[] = [];
    const generations: number[] = [];
    // ~150 bytes a new person's identifier takes, ~30 a member of a shared address's set (it grows).
    const batch = new HistoryBatchEncoder(Math.min(dirty.size, o.flushBatch) * 160);
    // The slot being written, for the walks' callbacks (made once a batch, not once a slot).
    let touchedAt = 0;
    let minuteFrom = 0;
    let hourFrom = 0;
    // Counters out of the window of the key's latest event are forgotten, not written: the file
    // may have dropped them already (history-packed.ts), and no window reads them. (An event sums
    // each grain it counts first, which forgets them too: this is the guard.)
    const stale = (c: number) => bucketOf(c) <= (grainOf(c) === GRAIN_HOUR ? hourFrom : minuteFrom);
    const writeCount = (c: number, n: number) => {
      const grain = grainOf(c);
      const bucket = bucketOf(c);
      // The key's latest event, within the bucket (an event of a later bucket may have touched it since).
      batch.count(grain, bucket, n, Math.min(touchedAt, (bucket + 1) * (grain === GRAIN_HOUR ? HOUR_MS : MINUTE_MS) - 1));
    };
    const writeMember = (kind: number, member: string, seen: number) => batch.member(KIND_CHARS[kind]!, member, seen);
    for (const slot of dirty) {
      if (taken.length >= o.flushBatch) break;
      dirty.delete(slot);
      taken.push(slot);
      generations.push(slots.generation[slot]!);
      slots.inFlight[slot]! += 1;
      const flags = slots.flags[slot]!;
      slots.flags[slot] = flags & ~(FRESH | CELLS_CHANGED);
      batch.subject(slots.account[slot]!, slots.name[slot]!, (flags & FRESH) !== 0);
      if ((flags & CELLS_CHANGED) !== 0) {
        const first = slots.firstSeen[slot]!;
        const last = slots.lastSeen[slot]!;
        if (!Number.isNaN(first) && !Number.isNaN(last)) {
          const p = slots.place[slot] ?? null;
          batch.key({
            firstSeen: first, lastSeen: last, country: p?.country ?? null, latitude: p?.latitude ?? null, longitude: p?.longitude ?? null,
            radiusKm: p?.radiusKm ?? null, asn: p?.asn ?? null, anonymous: p === null || p.anonymous === null ? null : p.anonymous ? 1 : 0,
          });
        }
        touchedAt = slots.touchedAt[slot]!;
        minuteFrom = Math.floor(touchedAt / MINUTE_MS) - MINUTES_IN_WINDOW;
        hourFrom = Math.floor(touchedAt / HOUR_MS) - HOURS_IN_WINDOW;
        slots.eachCount(slot, stale, writeCount);
        slots.eachMember(slot, writeMember);
      }
      const trimmed = evicted.get(slot);
      if (trimmed !== undefined) {
        for (const km of trimmed) batch.evicted(km[0]!, km.slice(1));
        evicted.delete(slot);
      }
      const changed = dirtyVelocity.get(slot);
      if (changed !== undefined) {
        for (const sb of changed) {
          const at = sb.indexOf('\u0000');
          const series = sb.slice(0, at);
          const bucket = Number(sb.slice(at + 1));
          const c = velocity.get(slot)?.get(series)?.get(bucket);
          if (c !== undefined) batch.velocity(series, bucket, c.n, c.expires);
        }
        dirtyVelocity.delete(slot);
      }
    }
    return { taken, generations, batch: batch.finish() };
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
          const { taken, generations, batch } = takeBatch();
          sent.push(o.thread.send({ type: 'history', batch }, [batch.buffer as ArrayBuffer]).then(
            () => undefined,
            (error: unknown) => {
              // Not retried, and counted: what this batch held stays in memory, and the identifier's
              // next write-back (once an event changes it) carries all it holds again. Trimmed
              // members and velocity cells it held are not sent again.
              failed += taken.length;
              o.onWriteError(error as Error);
            },
          ).finally(() => {
            taken.forEach((slot, i) => {
              if (slots.generation[slot] === generations[i]) slots.inFlight[slot]! -= 1;
            });
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
  const full = () => slots.held > o.maxEntries || slots.bytes > o.maxBytes;

  return {
    synchronous: true,
    record(event: HistoryEvent): Prior | null {
      if (full()) {
        // The writer is behind: not recorded (memory would grow), answered without history.
        refused += 1;
        return null;
      }
      const { account } = event;
      const ip = slotOf(account, event.ip, event);
      const email = slotOf(account, event.email, event);
      const device = event.device === null ? -1 : slotOf(account, event.device, event);
      const user = event.user === null ? -1 : slotOf(account, event.user, event);
      const minuteFrom = event.minute - MINUTES_IN_WINDOW;
      const hourFrom = event.hour - HOURS_IN_WINDOW;
      // Each member as the sets hold it, the key as text: the identity's and the device's are their
      // slots' own strings (no new one made, and one string however many sets name it).
      const identity = event.identity === event.user && user >= 0 ? slots.name[user]! : event.identity === event.email ? slots.name[email]! : event.identity.toString('latin1');
      const deviceMember = device < 0 ? null : slots.name[device]!;
      const countryMember = event.country === null ? null : event.country.toString('latin1');

      const prior: Prior = {
        ip: { minutes: slots.sum(ip, GRAIN_MINUTE, minuteFrom, event.minute), hours: slots.sum(ip, GRAIN_HOUR, hourFrom, event.hour), accounts: reading(ip, KIND_ACCOUNTS, identity, event.since24h) },
        email: { hours: slots.sum(email, GRAIN_HOUR, hourFrom, event.hour), firstSeen: orNull(slots.firstSeen[email]!), devices: reading(email, KIND_DEVICES, deviceMember, event.since30d) },
        device: device < 0 ? null : {
          minutes: slots.sum(device, GRAIN_MINUTE, minuteFrom, event.minute),
          firstSeen: orNull(slots.firstSeen[device]!),
          accounts: reading(device, KIND_ACCOUNTS, identity, event.since30d),
        },
        user: user < 0 ? null : {
          firstSeen: orNull(slots.firstSeen[user]!),
          lastSeen: orNull(slots.lastSeen[user]!),
          place: Number.isNaN(slots.lastSeen[user]!) ? null : (slots.place[user] ?? null),
          devices: reading(user, KIND_DEVICES, deviceMember, event.since30d),
          countries: reading(user, KIND_COUNTRIES, countryMember, event.since24h),
          // Memory holds members within HISTORY_DAYS (prune() forgets the older, as the file does).
          baseline: { devices: slots.sizeOf(user, KIND_DEVICES) > 0, countries: slots.sizeOf(user, KIND_COUNTRIES) > 0 },
        },
        velocity: [],
      };
      const plan = event.velocity;
      if (plan !== null) {
        // Counters share a few keys (the step hands the same Buffer for the same key): each looked up once.
        const keyed = new Map<Buffer, number>();
        const at = (key: Buffer) => {
          let slot = keyed.get(key);
          if (slot === undefined) keyed.set(key, (slot = slotOf(account, key, event)));
          return slot;
        };
        // Every read before any count: what came before the event.
        for (const read of plan.reads) prior.velocity.push(read.key === null ? 0 : velocitySum(at(read.key), read.series, read.from, read.to, event.minute));
        for (const c of plan.counts) velocityCount(at(c.key), c.series, c.bucket, c.expires, event.minute);
      }

      count(ip, GRAIN_MINUTE, event.minute);
      count(ip, GRAIN_HOUR, event.hour);
      touch(ip, KIND_ACCOUNTS, identity, event.at);
      count(email, GRAIN_HOUR, event.hour);
      seenAt(email, event.at, null);
      if (device >= 0) {
        count(device, GRAIN_MINUTE, event.minute);
        touch(device, KIND_ACCOUNTS, identity, event.at);
        seenAt(device, event.at, null);
        touch(email, KIND_DEVICES, deviceMember!, event.at);
      }
      if (user >= 0) {
        if (deviceMember !== null) touch(user, KIND_DEVICES, deviceMember, event.at);
        if (countryMember !== null) touch(user, KIND_COUNTRIES, countryMember, event.at);
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
      for (const c of counts) velocityCount(slotOf(account, c.key, when), c.series, c.bucket, c.expires, when.minute);
      schedule();
      evict();
    },

    async erase(account, keys) {
      // What memory holds goes to the file first, so the counts answered are all there was.
      await flush();
      const names = keys.map((key) => key.toString('latin1'));
      const ids = names.map((name) => `${account}\u0000${name}`);
      // The person's devices (from the file, now that memory is written): their velocity counters go too.
      const devices = keys.flatMap((key) => devicesIn((selectCells.get(account, key) as Buffer | null | undefined) ?? null)).map((d) => d.toString('latin1'));
      const deviceIds = devices.map((name) => `${account}\u0000${name}`);
      for (const name of devices) {
        const slot = slots.find(account, name);
        const cells = slot < 0 ? undefined : velocity.get(slot);
        if (cells === undefined) continue;
        for (const series of cells.values()) slots.addBytes(slot, -COUNT_BYTES * series.size);
        velocity.set(slot, new Map());
        dirtyVelocity.delete(slot);
      }
      for (const id of deviceIds) erasingVelocity.add(id);
      for (const id of ids) erasingKeys.add(id);
      for (const name of names) {
        const slot = slots.find(account, name);
        if (slot < 0) continue;
        dirty.delete(slot);
        forget(slot);
      }
      // The person among the accounts of IPs and devices held in memory.
      const person = new Set(names);
      for (const slot of slots.slots(account)) {
        if (slots.sizeOf(slot, KIND_ACCOUNTS) > 0) slots.dropMembers(slot, (kind, member) => kind === KIND_ACCOUNTS && person.has(member));
      }
      try {
        // After every write-back sent before it: the writer thread answers in order.
        const reply = await o.thread.send({ type: 'history-erase', account, keys });
        return reply.counts as unknown as ErasedHistory;
      } finally {
        for (const id of ids) erasingKeys.delete(id);
        for (const id of deviceIds) erasingVelocity.delete(id);
      }
    },

    prune() {
      if (closed) return Promise.resolve(0);
      pruning ??= (async () => {
        const b = pruneBounds(o.now(), o.historyDays);
        // Memory first (it is the truth): written back, then what is past HISTORY_DAYS forgotten as the file forgets it.
        await flush();
        for (const slot of slots.slots()) {
          if (dirty.has(slot) || slots.inFlight[slot]! > 0) continue;
          if (slots.touchedAt[slot]! < b.before) forget(slot);
          else slots.dropMembers(slot, (_kind, _member, seen) => seen < b.before);
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

    stats: () => ({ failed, refused, pruned, cached: slots.held, pending: dirty.size, bytes: slots.bytes }),

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
