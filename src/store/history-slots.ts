import { SET_ACCOUNTS, SET_COUNTRIES, SET_DEVICES, SET_KEEP } from '../history/caps.js';
import type { Place } from '../history/place.js';

/**
 * SQLite history's identifiers in memory (history-sqlite.ts), each a slot: a number indexing
 * columns common to all of them (typed arrays for its times, flags and first few counters and set
 * members; plain arrays for its key and account as text and a user's place), not objects of its
 * own. An identifier held as an object with a Map of counters and a Map of members was about ten
 * heap objects (four a new person), each kept for seconds past its write-back, so promoted and
 * marked again by every collection: the collector's pauses were most of what history's state cost
 * the main thread (bench/history-state.ts: 829–1,227 ms of pauses per 200,000 new people as objects
 * against 133–188 as slots, the longest 17–29 against 5–7 ms). A slot's only heap objects are its
 * key as text (shared with the look-up's Map and with the sets that name it) and its entry there.
 *
 * A slot holds COUNTS_INLINE counters and MEMBERS_INLINE set members in its columns: all a new
 * person's identifiers need (an address, e-mail address or device counts one or two buckets; a
 * user holds a device and a country). One that needs more moves them to Maps of its own (`over`),
 * as every identifier was held before: a shared address with its hundred accounts and a day of
 * buckets, one person's identifiers after a few hours. Those are few, and hot.
 *
 * Keys and members are text, one character a byte (latin1): a Map hashes a 16-character string as
 * fast as any, and the write-back copies it into its batch without making a Buffer.
 */

/** Set kinds, as slots keep them: the accounts behind an identifier, its devices, its countries. */
export const KIND_ACCOUNTS = 0;
export const KIND_DEVICES = 1;
export const KIND_COUNTRIES = 2;
/** Each kind's character in the file and the write-back (history-packed.ts). */
export const KIND_CHARS = [SET_ACCOUNTS, SET_DEVICES, SET_COUNTRIES] as const;
/** A kind's number from its character, or -1. */
export const kindOf = (char: string): number => KIND_CHARS.indexOf(char as (typeof KIND_CHARS)[number]);

export const COUNTS_INLINE = 4;
export const MEMBERS_INLINE = 4;

/** A slot's flags. Touched since the eviction hand last passed it (history-sqlite.ts `evict`). */
export const RECENT = 1;
/** Not in the file (the key filter said so) and not yet sent to be written: its write-back inserts without a read. */
export const FRESH = 2;
/** An event counted it, touched a member or saw it since its last write-back: not a velocity counter alone. */
export const CELLS_CHANGED = 4;
/** The file may hold velocity cells of this key not read yet: not for a key never seen, or being erased. */
export const VELOCITY_IN_FILE = 8;
/** Its counters, its set members, in Maps of its own (`Over`). */
const COUNTS_OVER = 16;
const MEMBERS_OVER = 32;
/** Held by a key (a free slot has no flag). */
const USED = 64;

/**
 * Estimated heap bytes of a slot (the documented bounds, SQLITE_HISTORY_DEFAULTS, are in these):
 * its share of the columns (195 bytes a slot of their capacity: 139 typed, 56 of plain arrays'
 * pointers; at half their capacity, 390 a slot held), its key as text and its entry in the look-up's
 * Map (~100). Measured (bench/history-memory.ts, the crowd's new people): 354–367 bytes an
 * identifier at 100,000 held (the columns three quarters full), heap and typed arrays, against
 * 1,079–1,092 as objects. Not in it: the columns never shrink, so after a burst (the writer behind) they
 * stay at the most slots ever held, a power of two (131,072 at the default bounds: 25.6 MB) while
 * the estimate comes back down with what is held; the copy `grow()` makes for a moment; a slot's
 * own Maps beyond their entries (~300–500 bytes, for the few past their columns).
 */
export const SLOT_BYTES = 480;
/** Of a counter or a set member held in a slot's own Maps, once it has moved them there. */
export const COUNT_BYTES = 60;
export const MEMBER_BYTES = 110;

/** Columns start with room for this many slots, and double. */
const FIRST_CAPACITY = 1_024;

/** A slot's counters and members once past its columns: grain × 1e9 + bucket → events; per kind, member → last seen. */
interface Over {
  counts: Map<number, number> | null;
  sets: [Map<string, number>, Map<string, number>, Map<string, number>] | null;
  /**
   * Per kind, a time no member was last seen before (a lower bound: a member seen again only moves
   * later, one let go only lifts the least): `countSince` a window that starts no later counts the
   * set's size, without walking a shared address's hundred accounts on every event.
   */
  floor: [number, number, number];
}

export class HistorySlots {
  /** Estimated heap bytes of all held (SLOT_BYTES a slot, and what its Maps hold). */
  bytes = 0;
  /** Slots in use. */
  held = 0;
  /** Slots made: those in use and the free ones, 0 … made - 1 (what the eviction clock walks). */
  made = 0;

  firstSeen = new Float64Array(FIRST_CAPACITY);
  lastSeen = new Float64Array(FIRST_CAPACITY);
  /** The last event that touched it (or when it was read), for pruning memory as the file is pruned. */
  touchedAt = new Float64Array(FIRST_CAPACITY);
  flags = new Uint8Array(FIRST_CAPACITY);
  /** Write-backs sent and not yet answered. */
  inFlight = new Uint16Array(FIRST_CAPACITY);
  /** Counts the keys the slot has held: a write-back's answer for a key since forgotten leaves the next one's `inFlight` alone. */
  generation = new Uint32Array(FIRST_CAPACITY);
  /** Its key as text (latin1) and its account; a user's last place. */
  readonly name: Array<string | undefined> = [];
  readonly account: Array<string | undefined> = [];
  readonly place: Array<Place | null> = [];

  private slotBytes = new Float64Array(FIRST_CAPACITY);
  /** COUNTS_INLINE a slot: the cell (grain × 1e9 + bucket) and its events; 0 events: a free place. */
  private countKey = new Float64Array(FIRST_CAPACITY * COUNTS_INLINE);
  private countN = new Float64Array(FIRST_CAPACITY * COUNTS_INLINE);
  /** MEMBERS_INLINE a slot: kind + 1 (0: a free place), the member as text, seen last. */
  private memberKind = new Uint8Array(FIRST_CAPACITY * MEMBERS_INLINE);
  private memberSeen = new Float64Array(FIRST_CAPACITY * MEMBERS_INLINE);
  private readonly memberName: Array<string | undefined> = [];
  private readonly over = new Map<number, Over>();
  private readonly free: number[] = [];
  /** Account → key as text → slot. */
  private readonly index = new Map<string, Map<string, number>>();
  private lastAccount: string | null = null;
  private lastKeys: Map<string, number> | undefined;

  /** The slot of the key, or -1. */
  find(account: string, name: string): number {
    return this.keysOf(account)?.get(name) ?? -1;
  }

  /** The account's keys; the last account's kept at hand (most services have one, and an event's keys share theirs). */
  private keysOf(account: string): Map<string, number> | undefined {
    if (account === this.lastAccount) return this.lastKeys;
    const keys = this.index.get(account);
    if (keys !== undefined) {
      this.lastAccount = account;
      this.lastKeys = keys;
    }
    return keys;
  }

  /** A new slot for the key (not held): nothing in it yet, no flag but USED, its times NaN. */
  take(account: string, name: string): number {
    const slot = this.free.pop() ?? this.made++;
    if (slot >= this.flags.length) this.grow();
    let keys = this.keysOf(account);
    if (keys === undefined) this.index.set(account, (keys = new Map()));
    keys.set(name, slot);
    this.name[slot] = name;
    this.account[slot] = account;
    this.place[slot] = null;
    this.firstSeen[slot] = NaN;
    this.lastSeen[slot] = NaN;
    this.touchedAt[slot] = 0;
    this.flags[slot] = USED;
    this.inFlight[slot] = 0;
    this.generation[slot]! += 1;
    // Loops, not fill(): a call into the runtime costs more than four stores.
    for (let i = slot * COUNTS_INLINE; i < (slot + 1) * COUNTS_INLINE; i++) this.countN[i] = 0;
    for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) this.memberKind[i] = 0;
    this.slotBytes[slot] = SLOT_BYTES;
    this.bytes += SLOT_BYTES;
    this.held += 1;
    return slot;
  }

  /** Forgets the slot and all it holds; it is free for another key. */
  release(slot: number): void {
    const account = this.account[slot]!;
    const keys = this.keysOf(account)!;
    keys.delete(this.name[slot]!);
    if (keys.size === 0) {
      this.index.delete(account);
      this.lastAccount = null;
      this.lastKeys = undefined;
    }
    this.name[slot] = this.account[slot] = undefined;
    this.place[slot] = null;
    // Its members' strings let go (another slot's key, or a country).
    for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) this.memberName[i] = undefined;
    if ((this.flags[slot]! & (COUNTS_OVER | MEMBERS_OVER)) !== 0) this.over.delete(slot);
    this.flags[slot] = 0;
    this.bytes -= this.slotBytes[slot]!;
    this.held -= 1;
    this.free.push(slot);
  }

  isUsed(slot: number): boolean {
    return (this.flags[slot]! & USED) !== 0;
  }

  /** Slots in use, of one account or all. */
  *slots(account?: string): Generator<number> {
    if (account !== undefined) {
      yield* [...(this.keysOf(account)?.values() ?? [])];
      return;
    }
    for (let slot = 0; slot < this.made; slot++) if (this.isUsed(slot)) yield slot;
  }

  // Counters.

  /** Adds `n` events to the cell. */
  count(slot: number, cell: number, n: number): void {
    if ((this.flags[slot]! & COUNTS_OVER) === 0) {
      const base = slot * COUNTS_INLINE;
      let free = -1;
      for (let i = base; i < base + COUNTS_INLINE; i++) {
        if (this.countN[i] === 0) {
          if (free < 0) free = i;
        } else if (this.countKey[i] === cell) {
          this.countN[i]! += n;
          return;
        }
      }
      if (free >= 0) {
        this.countKey[free] = cell;
        this.countN[free] = n;
        return;
      }
      this.countsOver(slot);
    }
    const counts = this.over.get(slot)!.counts!;
    const before = counts.get(cell);
    counts.set(cell, (before ?? 0) + n);
    if (before === undefined) this.addBytes(slot, COUNT_BYTES);
  }

  /**
   * Events of one grain in buckets (from, to]; counters of that grain out of their window for good
   * (bucket ≤ from) are forgotten on the way (the file's copy is pruned off the request path).
   */
  sum(slot: number, grain: number, from: number, to: number): number {
    let total = 0;
    const base = grain * 1e9;
    if ((this.flags[slot]! & COUNTS_OVER) === 0) {
      for (let i = slot * COUNTS_INLINE; i < (slot + 1) * COUNTS_INLINE; i++) {
        if (this.countN[i] === 0) continue;
        const bucket = this.countKey[i]! - base;
        if (bucket > from && bucket <= to) total += this.countN[i]!;
        else if (bucket >= 0 && bucket < 1e9 && bucket <= from) this.countN[i] = 0;
      }
      return total;
    }
    // forEach, not for-of over entries: a for-of makes an [key, value] array per entry, and a
    // shared address's 84 counters are walked on every event.
    const counts = this.over.get(slot)!.counts!;
    counts.forEach((n, c) => {
      const bucket = c - base;
      if (bucket > from && bucket <= to) total += n;
      else if (bucket >= 0 && bucket < 1e9 && bucket <= from) {
        counts.delete(c);
        this.addBytes(slot, -COUNT_BYTES);
      }
    });
    return total;
  }

  /** Each counter; those `stale` says no window reads any more are forgotten instead. */
  eachCount(slot: number, stale: (cell: number) => boolean, each: (cell: number, n: number) => void): void {
    if ((this.flags[slot]! & COUNTS_OVER) === 0) {
      for (let i = slot * COUNTS_INLINE; i < (slot + 1) * COUNTS_INLINE; i++) {
        if (this.countN[i] === 0) continue;
        if (stale(this.countKey[i]!)) this.countN[i] = 0;
        else each(this.countKey[i]!, this.countN[i]!);
      }
      return;
    }
    const counts = this.over.get(slot)!.counts!;
    counts.forEach((n, c) => {
      if (!stale(c)) return each(c, n);
      counts.delete(c);
      this.addBytes(slot, -COUNT_BYTES);
    });
  }

  // Set members.

  /** Members of the kind held. */
  sizeOf(slot: number, kind: number): number {
    if ((this.flags[slot]! & MEMBERS_OVER) !== 0) return this.over.get(slot)!.sets![kind]!.size;
    let size = 0;
    for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) if (this.memberKind[i] === kind + 1) size += 1;
    return size;
  }

  /** When the member was last seen, or null. */
  seenOf(slot: number, kind: number, member: string): number | null {
    if ((this.flags[slot]! & MEMBERS_OVER) !== 0) return this.over.get(slot)!.sets![kind]!.get(member) ?? null;
    for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) {
      if (this.memberKind[i] === kind + 1 && this.memberName[i] === member) return this.memberSeen[i]!;
    }
    return null;
  }

  /** Members of the kind seen since `since`, at most SET_KEEP. */
  countSince(slot: number, kind: number, since: number): number {
    let count = 0;
    if ((this.flags[slot]! & MEMBERS_OVER) !== 0) {
      const over = this.over.get(slot)!;
      const set = over.sets![kind]!;
      if (over.floor[kind]! >= since) return Math.min(set.size, SET_KEEP);
      let floor = Infinity;
      set.forEach((seen) => {
        if (seen >= since) count += 1;
        if (seen < floor) floor = seen;
      });
      over.floor[kind] = floor;
    } else {
      for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) {
        if (this.memberKind[i] === kind + 1 && this.memberSeen[i]! >= since) count += 1;
      }
    }
    return Math.min(count, SET_KEEP);
  }

  /**
   * The member seen at `at` (its time the later of the two if held). The set keeps its most recent
   * SET_KEEP + 1 members, as PostgreSQL's statement trims it: the one it no longer keeps is
   * answered (as kind character + member), for the write-back to take out of the file; else null.
   */
  touch(slot: number, kind: number, member: string, at: number): string | null {
    if ((this.flags[slot]! & MEMBERS_OVER) === 0) {
      let free = -1;
      for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) {
        if (this.memberKind[i] === 0) {
          if (free < 0) free = i;
        } else if (this.memberKind[i] === kind + 1 && this.memberName[i] === member) {
          this.memberSeen[i] = Math.max(this.memberSeen[i]!, at);
          return null;
        }
      }
      if (free >= 0) {
        this.memberKind[free] = kind + 1;
        this.memberName[free] = member;
        this.memberSeen[free] = at;
        return null;
      }
      this.membersOver(slot);
    }
    const over = this.over.get(slot)!;
    const set = over.sets![kind]!;
    const before = set.get(member);
    set.set(member, Math.max(before ?? at, at));
    if (before !== undefined) return null;
    over.floor[kind] = Math.min(over.floor[kind]!, at);
    this.addBytes(slot, MEMBER_BYTES);
    if (set.size <= SET_KEEP + 1) return null;
    let oldest: string | null = null;
    let oldestSeen = Infinity;
    set.forEach((seen, m) => {
      if (seen < oldestSeen && m !== member) {
        oldest = m;
        oldestSeen = seen;
      }
    });
    set.delete(oldest!);
    this.addBytes(slot, -MEMBER_BYTES);
    return KIND_CHARS[kind] + oldest!;
  }

  /** A member read from the file: held as it was (no trimming: the file's set is trimmed already). */
  put(slot: number, kind: number, member: string, seen: number): void {
    if ((this.flags[slot]! & MEMBERS_OVER) === 0) {
      for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) {
        if (this.memberKind[i] !== 0) continue;
        this.memberKind[i] = kind + 1;
        this.memberName[i] = member;
        this.memberSeen[i] = seen;
        return;
      }
      this.membersOver(slot);
    }
    const over = this.over.get(slot)!;
    const set = over.sets![kind]!;
    if (!set.has(member)) this.addBytes(slot, MEMBER_BYTES);
    set.set(member, seen);
    over.floor[kind] = Math.min(over.floor[kind]!, seen);
  }

  /** Each member held: its kind, the member, seen last. */
  eachMember(slot: number, each: (kind: number, member: string, seen: number) => void): void {
    if ((this.flags[slot]! & MEMBERS_OVER) !== 0) {
      this.over.get(slot)!.sets!.forEach((set, kind) => set.forEach((seen, m) => each(kind, m, seen)));
      return;
    }
    for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) {
      if (this.memberKind[i] !== 0) each(this.memberKind[i]! - 1, this.memberName[i]!, this.memberSeen[i]!);
    }
  }

  /** Forgets the members `drop` names (kind, member, seen); answers how many. */
  dropMembers(slot: number, drop: (kind: number, member: string, seen: number) => boolean): number {
    let dropped = 0;
    if ((this.flags[slot]! & MEMBERS_OVER) !== 0) {
      this.over.get(slot)!.sets!.forEach((set, kind) => set.forEach((seen, m) => {
        if (!drop(kind, m, seen)) return;
        set.delete(m);
        this.addBytes(slot, -MEMBER_BYTES);
        dropped += 1;
      }));
      return dropped;
    }
    for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) {
      if (this.memberKind[i] === 0 || !drop(this.memberKind[i]! - 1, this.memberName[i]!, this.memberSeen[i]!)) continue;
      this.memberKind[i] = 0;
      this.memberName[i] = undefined;
      dropped += 1;
    }
    return dropped;
  }

  /** The slot's counters move to a Map of its own (its columns are full). */
  private countsOver(slot: number): void {
    const over = this.overOf(slot);
    const counts = (over.counts = new Map());
    for (let i = slot * COUNTS_INLINE; i < (slot + 1) * COUNTS_INLINE; i++) {
      if (this.countN[i] !== 0) counts.set(this.countKey[i]!, this.countN[i]!);
    }
    this.flags[slot]! |= COUNTS_OVER;
    this.addBytes(slot, COUNT_BYTES * counts.size);
  }

  /** The slot's members move to a Map of their kind (its columns are full). */
  private membersOver(slot: number): void {
    const over = this.overOf(slot);
    const sets = (over.sets = [new Map(), new Map(), new Map()]);
    let moved = 0;
    for (let i = slot * MEMBERS_INLINE; i < (slot + 1) * MEMBERS_INLINE; i++) {
      if (this.memberKind[i] === 0) continue;
      const kind = this.memberKind[i]! - 1;
      sets[kind]!.set(this.memberName[i]!, this.memberSeen[i]!);
      over.floor[kind] = Math.min(over.floor[kind]!, this.memberSeen[i]!);
      this.memberKind[i] = 0;
      this.memberName[i] = undefined;
      moved += 1;
    }
    this.flags[slot]! |= MEMBERS_OVER;
    this.addBytes(slot, MEMBER_BYTES * moved);
  }

  private overOf(slot: number): Over {
    let over = this.over.get(slot);
    if (over === undefined) this.over.set(slot, (over = { counts: null, sets: null, floor: [Infinity, Infinity, Infinity] }));
    return over;
  }

  /** Bytes the slot holds beside its columns (its Maps' entries, velocity counters), or no longer. */
  addBytes(slot: number, by: number): void {
    this.slotBytes[slot]! += by;
    this.bytes += by;
  }

  /** Room for twice as many slots (copied once: the columns of 100,000 slots are ~20 MB). */
  private grow(): void {
    const capacity = this.flags.length * 2;
    const grown = <T extends Float64Array | Uint8Array | Uint16Array | Uint32Array>(a: T, per = 1): T => {
      const b = new (a.constructor as new (n: number) => T)(capacity * per);
      b.set(a);
      return b;
    };
    this.firstSeen = grown(this.firstSeen);
    this.lastSeen = grown(this.lastSeen);
    this.touchedAt = grown(this.touchedAt);
    this.flags = grown(this.flags);
    this.inFlight = grown(this.inFlight);
    this.generation = grown(this.generation);
    this.slotBytes = grown(this.slotBytes);
    this.countKey = grown(this.countKey, COUNTS_INLINE);
    this.countN = grown(this.countN, COUNTS_INLINE);
    this.memberKind = grown(this.memberKind, MEMBERS_INLINE);
    this.memberSeen = grown(this.memberSeen, MEMBERS_INLINE);
  }
}
