/**
 * `npx tsx bench/history-state.ts`: what SQLite history's in-memory state costs the main thread, as
 * the store held it against fixed slots in typed arrays common to all identifiers. The prototype
 * behind src/store/history-slots.ts (the store keeps slots since; `objects` is the store before),
 * kept as the record of that comparison, not the service's code: no file, no writer thread, no hashing
 * (bench/history-step.ts has them), no eviction clock (the oldest goes first), no set readings or
 * first/last-seen columns. Per event, a new person's four identifiers (address, e-mail, device,
 * user), all never seen; each counted in a bucket or two and given a set member, three of them
 * summed first (the facts' reads); every FLUSH_EVERY events the changed ones are encoded into a
 * byte buffer (the write-back's batch); past HELD identifiers the oldest goes. Prints the main
 * thread's CPU µs an event (V8's helper threads, which scavenge in parallel, are not in it) and the
 * collector's pauses.
 *
 * - `objects`: as src/store/history-sqlite.ts held an identifier: a KeyState object with a Map of
 *   counts and a Map of set members, keyed `account \0 hex`, members keyed `kind + hex`.
 * - `slots`: an identifier is a number: its counts and members in typed arrays, its key in a
 *   slab, a Map from its key (latin1) to its slot (as src/history/local-counts.ts keeps its counts).
 *   Simplified: SLOT_CELLS counts and SLOT_MEMBERS members a slot, which a new person never passes;
 *   the real store would need somewhere for the larger sets of a shared address or a farm's device
 *   (up to SET_KEEP + 1 members), the counts of a day's windows, and velocity cells.
 * - `hybrid`: the KeyState object and its members' Map kept, its counts in slots.
 *
 * Run each mode in its own process (one heap each), alternated:
 *
 *   for m in objects slots hybrid objects slots hybrid; do node --max-old-space-size=224 --max-semi-space-size=8 --heap-growing-percent=100 --import tsx bench/history-state.ts --mode $m; done
 */
import { randomBytes } from 'node:crypto';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
  options: {
    mode: { type: 'string', default: 'objects' },
    events: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '3' },
  },
});
const MODES = ['objects', 'slots', 'hybrid'] as const;
type Mode = (typeof MODES)[number];
if (!(MODES as readonly string[]).includes(options.mode!)) throw new Error(`--mode: one of ${MODES.join(', ')}`);
const mode = options.mode as Mode;
const EVENTS = Number(options.events);
const ROUNDS = Number(options.rounds);

/**
 * Identifiers held: what SQLite history's 16 MiB of kept state holds at its old estimate of ~1,150
 * bytes an identifier; its estimate now (~1,370 a new person's identifier) gives ~12,200, so this
 * holds a little more than the service does (both modes alike).
 */
const HELD = 14_000;
/** Events between write-backs: 50 ms at 2,500 evaluations a second. */
const FLUSH_EVERY = 125;
const SLOT_CELLS = 4;
const SLOT_MEMBERS = 4;
const ACCOUNT = 'acct_bench';
const MINUTE_GRAIN = 1e9;
const HOUR_GRAIN = 2e9;

/** The four identifiers' states of one event, each mode's own. */
type Step = (event: number, minute: number, hour: number, at: number) => number;

let pauses = { n: 0, ms: 0, longest: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    pauses.n += 1;
    pauses.ms += e.duration;
    pauses.longest = Math.max(pauses.longest, e.duration);
  }
}).observe({ entryTypes: ['gc'] });

// Keys as the hasher hands them: a 16-byte Buffer of its own each, unique per identifier.
const seeds = Array.from({ length: 4096 }, () => randomBytes(16));
const keyOf = (n: number): Buffer => {
  const key = Buffer.alloc(16);
  seeds[n & 4095]!.copy(key);
  key.writeUInt32LE(n >>> 0, 0);
  return key;
};
/** The write-back's batch, reused (its encoding is the same work in every mode). */
const batch = Buffer.alloc(1 << 20);
const BATCH_WRAP = 1 << 19;

/** Adds an event to a cell of the slot's SLOT_CELLS (the cell's own, or the first free one; none past them). */
function countInSlot(cellKey: Float64Array, cellN: Uint32Array, slot: number, cell: number) {
  const base = slot * SLOT_CELLS;
  for (let j = 0; j < SLOT_CELLS; j++) {
    if (cellN[base + j] === 0) {
      cellKey[base + j] = cell;
      cellN[base + j] = 1;
      return;
    }
    if (cellKey[base + j] === cell) {
      cellN[base + j]! += 1;
      return;
    }
  }
}

const sumOfSlot = (cellN: Uint32Array, slot: number) => {
  let total = 0;
  for (let j = 0; j < SLOT_CELLS; j++) total += cellN[slot * SLOT_CELLS + j]!;
  return total;
};

/** Writes the slot's counted cells (cell, events) into the batch at `o`; returns the end. */
function encodeSlot(cellKey: Float64Array, cellN: Uint32Array, slot: number, o: number): number {
  for (let j = slot * SLOT_CELLS; j < (slot + 1) * SLOT_CELLS; j++) {
    if (cellN[j] !== 0) o = batch.writeUInt32LE(cellN[j]!, batch.writeDoubleLE(cellKey[j]!, o));
  }
  return o;
}

/**
 * The store's KeyState, with fields this step does not use kept so the object is near its size (it
 * lacks place, countries, evicted and the velocity fields: ~32 bytes smaller), and `slot` for hybrid.
 */
interface KeyState {
  id: string;
  account: string;
  key: Buffer;
  slot: number;
  firstSeen: number | null;
  lastSeen: number | null;
  counts: Map<number, number> | null;
  members: Map<string, number>;
  accounts: number;
  devices: number;
  cellsChanged: boolean;
  inFlight: number;
  bytes: number;
  touchedAt: number;
  recent: boolean;
  fresh: boolean;
}

/** `objects` and `hybrid`: a KeyState an identifier (hybrid: its counts in slots). */
function objectStates(countsInSlots: boolean): Step {
  const cache = new Map<string, KeyState>();
  let cursor = cache.keys();
  let dirty = new Set<KeyState>();
  const cellKey = new Float64Array((HELD + 1) * SLOT_CELLS);
  const cellN = new Uint32Array((HELD + 1) * SLOT_CELLS);
  const free: number[] = [];
  let made = 0;

  const stateOf = (key: Buffer, at: number): KeyState => {
    const id = `${ACCOUNT}\u0000${key.toString('hex')}`;
    let state = cache.get(id);
    if (state === undefined) {
      const slot = countsInSlots ? (free.pop() ?? made++) : -1;
      if (slot >= 0) cellN.fill(0, slot * SLOT_CELLS, (slot + 1) * SLOT_CELLS);
      state = {
        id, account: ACCOUNT, key, slot, firstSeen: null, lastSeen: null, counts: countsInSlots ? null : new Map(), members: new Map(),
        accounts: 0, devices: 0, cellsChanged: false, inFlight: 0, bytes: 1_150, touchedAt: at, recent: false, fresh: true,
      };
      cache.set(id, state);
      if (cache.size > HELD) {
        // A cursor kept from one eviction to the next (as src/core/map-clock.ts keeps one): a walk
        // from the oldest end each time would step over every deleted slot the Map still holds.
        let next = cursor.next();
        if (next.done === true) {
          cursor = cache.keys();
          next = cursor.next();
        }
        const oldestId = next.value as string;
        const oldest = cache.get(oldestId)!;
        if (oldest.slot >= 0) free.push(oldest.slot);
        cache.delete(oldestId);
      }
    }
    return state;
  };
  const count = (state: KeyState, cell: number) => {
    if (state.counts !== null) {
      state.counts.set(cell, (state.counts.get(cell) ?? 0) + 1);
    } else {
      countInSlot(cellKey, cellN, state.slot, cell);
    }
    state.cellsChanged = true;
    dirty.add(state);
  };
  const sum = (state: KeyState) => {
    let total = 0;
    if (state.counts !== null) state.counts.forEach((n) => (total += n));
    else total = sumOfSlot(cellN, state.slot);
    return total;
  };
  const touch = (state: KeyState, member: string, at: number) => {
    state.members.set(member, at);
    state.accounts += 1;
    state.cellsChanged = true;
    dirty.add(state);
  };
  const flush = () => {
    let o = 0;
    for (const state of dirty) {
      o %= BATCH_WRAP;
      o += state.key.copy(batch, o);
      if (state.counts !== null) {
        state.counts.forEach((n, cell) => {
          o = batch.writeUInt32LE(n, batch.writeDoubleLE(cell, o));
        });
      } else {
        o = encodeSlot(cellKey, cellN, state.slot, o);
      }
      state.members.forEach((seen, member) => {
        o += batch.write(member, o, 'latin1');
        o = batch.writeDoubleLE(seen, o);
      });
    }
    dirty = new Set();
  };
  return (event, minute, hour, at) => {
    const ip = stateOf(keyOf(event * 4), at);
    const email = stateOf(keyOf(event * 4 + 1), at);
    const device = stateOf(keyOf(event * 4 + 2), at);
    const user = stateOf(keyOf(event * 4 + 3), at);
    const identity = 'a' + user.key.toString('hex');
    const deviceMember = 'd' + device.key.toString('hex');
    const total = sum(ip) + sum(email) + sum(device);
    count(ip, MINUTE_GRAIN + minute);
    count(ip, HOUR_GRAIN + hour);
    touch(ip, identity, at);
    count(email, HOUR_GRAIN + hour);
    touch(email, deviceMember, at);
    count(device, MINUTE_GRAIN + minute);
    touch(device, identity, at);
    touch(user, deviceMember, at);
    if (event % FLUSH_EVERY === 0) flush();
    return total;
  };
}

/** `slots`: an identifier is a slot number; nothing of it on the JS heap but its Map entry. */
function slotStates(): Step {
  const MEMBER_SIZE = 17; // the set's kind, then the member's 16-byte key
  const slots = new Map<string, number>();
  /** Slots in the order they were taken (a ring): the oldest goes first. */
  const order = new Int32Array(HELD + 1);
  let head = 0;
  let tail = 0;
  const keys = new Uint8Array((HELD + 1) * 16);
  const cellKey = new Float64Array((HELD + 1) * SLOT_CELLS);
  const cellN = new Uint32Array((HELD + 1) * SLOT_CELLS);
  const memberBytes = new Uint8Array((HELD + 1) * SLOT_MEMBERS * MEMBER_SIZE);
  const memberSeen = new Float64Array((HELD + 1) * SLOT_MEMBERS);
  const memberCount = new Uint8Array(HELD + 1);
  const isDirty = new Uint8Array(HELD + 1);
  const dirty = new Int32Array(HELD + 1);
  let dirtyCount = 0;
  const free: number[] = [];
  let made = 0;

  const slotOf = (key: Buffer): number => {
    const id = key.toString('latin1');
    let slot = slots.get(id);
    if (slot === undefined) {
      if (slots.size >= HELD) {
        const oldest = order[head]!;
        head = (head + 1) % order.length;
        slots.delete(Buffer.from(keys.buffer, oldest * 16, 16).toString('latin1'));
        free.push(oldest);
      }
      slot = free.pop() ?? made++;
      keys.set(key, slot * 16);
      cellN.fill(0, slot * SLOT_CELLS, (slot + 1) * SLOT_CELLS);
      memberCount[slot] = 0;
      slots.set(id, slot);
      order[tail] = slot;
      tail = (tail + 1) % order.length;
    }
    return slot;
  };
  const mark = (slot: number) => {
    if (isDirty[slot] === 1) return;
    isDirty[slot] = 1;
    dirty[dirtyCount++] = slot;
  };
  const count = (slot: number, cell: number) => {
    countInSlot(cellKey, cellN, slot, cell);
    mark(slot);
  };
  const sum = (slot: number) => sumOfSlot(cellN, slot);
  const touch = (slot: number, kind: number, member: number, at: number) => {
    const m = memberCount[slot]!;
    if (m < SLOT_MEMBERS) {
      const from = (slot * SLOT_MEMBERS + m) * MEMBER_SIZE;
      memberBytes[from] = kind;
      memberBytes.set(keys.subarray(member * 16, member * 16 + 16), from + 1);
      memberSeen[slot * SLOT_MEMBERS + m] = at;
      memberCount[slot] = m + 1;
    }
    mark(slot);
  };
  const flush = () => {
    let o = 0;
    for (let d = 0; d < dirtyCount; d++) {
      const slot = dirty[d]!;
      isDirty[slot] = 0;
      o %= BATCH_WRAP;
      batch.set(keys.subarray(slot * 16, slot * 16 + 16), o);
      o += 16;
      o = encodeSlot(cellKey, cellN, slot, o);
      for (let m = 0; m < memberCount[slot]!; m++) {
        const from = (slot * SLOT_MEMBERS + m) * MEMBER_SIZE;
        batch.set(memberBytes.subarray(from, from + MEMBER_SIZE), o);
        o = batch.writeDoubleLE(memberSeen[slot * SLOT_MEMBERS + m]!, o + MEMBER_SIZE);
      }
    }
    dirtyCount = 0;
  };
  const ACCOUNTS = 'a'.charCodeAt(0);
  const DEVICES = 'd'.charCodeAt(0);
  return (event, minute, hour, at) => {
    const ip = slotOf(keyOf(event * 4));
    const email = slotOf(keyOf(event * 4 + 1));
    const device = slotOf(keyOf(event * 4 + 2));
    const user = slotOf(keyOf(event * 4 + 3));
    const total = sum(ip) + sum(email) + sum(device);
    count(ip, MINUTE_GRAIN + minute);
    count(ip, HOUR_GRAIN + hour);
    touch(ip, ACCOUNTS, user, at);
    count(email, HOUR_GRAIN + hour);
    touch(email, DEVICES, device, at);
    count(device, MINUTE_GRAIN + minute);
    touch(device, ACCOUNTS, user, at);
    touch(user, DEVICES, device, at);
    if (event % FLUSH_EVERY === 0) flush();
    return total;
  };
}

const step = mode === 'slots' ? slotStates() : objectStates(mode === 'hybrid');
const START = 1.76e12;
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  pauses = { n: 0, ms: 0, longest: 0 };
  const before = process.threadCpuUsage();
  for (let event = round * EVENTS; event < (round + 1) * EVENTS; event++) {
    // ~2,500 events a second of time: a minute bucket every 150,000 events, so the counts stay few.
    const at = START + event * 0.4;
    sink += step(event, Math.floor(at / 60_000), Math.floor(at / 3_600_000), at);
  }
  const cpu = process.threadCpuUsage(before);
  // The collector's entries are delivered on a later turn (a setImmediate is too soon for them).
  await new Promise((resolve) => setTimeout(resolve, 100));
  console.log(`${mode} round ${round + 1}: ${((cpu.user + cpu.system) / EVENTS).toFixed(1)} CPU µs an event; GC ${pauses.n} pauses, ${pauses.ms.toFixed(0)} ms, longest ${pauses.longest.toFixed(1)} ms`);
}
// Keeps the sums live, so the reads are not optimised away.
if (sink < 0) console.log(sink);
