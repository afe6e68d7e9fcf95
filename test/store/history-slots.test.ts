import { describe, expect, it } from 'vitest';
import { SET_KEEP } from '../../src/history/caps.js';
import { COUNT_BYTES, COUNTS_INLINE, HistorySlots, KIND_ACCOUNTS, KIND_COUNTRIES, KIND_DEVICES, MEMBER_BYTES, MEMBERS_INLINE, SLOT_BYTES } from '../../src/store/history-slots.js';

/**
 * SQLite history's identifiers in memory as slots (history-slots.ts): a slot's first counters and
 * members in shared columns, the rest in Maps of its own once past them. What the store reads must
 * not depend on where they are held, and a slot taken again must hold nothing of the key before it.
 */
const minute = (bucket: number) => 1e9 + bucket;
const hour = (bucket: number) => 2e9 + bucket;

const members = (slots: HistorySlots, slot: number) => {
  const all: Array<[number, string, number]> = [];
  slots.eachMember(slot, (kind, member, seen) => all.push([kind, member, seen]));
  return all.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
};
const counts = (slots: HistorySlots, slot: number) => {
  const all: Array<[number, number]> = [];
  slots.eachCount(slot, () => false, (cell, n) => all.push([cell, n]));
  return all.sort((a, b) => a[0] - b[0]);
};

describe('SQLite history slots', () => {
  it('reads the same before and after a slot moves its counters and members to Maps of its own', () => {
    const slots = new HistorySlots();
    const s = slots.take('acme', 'ip-1');
    expect(slots.bytes).toBe(SLOT_BYTES);
    for (let m = 0; m < COUNTS_INLINE + 3; m++) {
      slots.count(s, minute(100 + m), 1);
      slots.count(s, minute(100 + m), 1);
    }
    slots.count(s, hour(7), 5);
    // Minutes (from, to]: buckets 101 … 104, two events each.
    expect(slots.sum(s, 1, 100, 104)).toBe(8);
    expect(slots.sum(s, 2, 0, 7)).toBe(5);
    // Past their window for good (bucket ≤ from): forgotten as they are read.
    expect(slots.sum(s, 1, 102, 200)).toBe(8);
    expect(counts(slots, s)).toEqual([[minute(103), 2], [minute(104), 2], [minute(105), 2], [minute(106), 2], [hour(7), 5]]);
    expect(slots.bytes).toBe(SLOT_BYTES + 5 * COUNT_BYTES);

    for (let m = 0; m < MEMBERS_INLINE + 2; m++) expect(slots.touch(s, KIND_ACCOUNTS, `user-${m}`, 1_000 + m)).toBeNull();
    slots.touch(s, KIND_DEVICES, 'device-1', 900);
    slots.touch(s, KIND_ACCOUNTS, 'user-0', 5_000);
    slots.touch(s, KIND_ACCOUNTS, 'user-1', 10); // seen earlier than it was: its time stays the later
    expect(slots.sizeOf(s, KIND_ACCOUNTS)).toBe(MEMBERS_INLINE + 2);
    expect(slots.sizeOf(s, KIND_DEVICES)).toBe(1);
    expect(slots.sizeOf(s, KIND_COUNTRIES)).toBe(0);
    expect(slots.seenOf(s, KIND_ACCOUNTS, 'user-0')).toBe(5_000);
    expect(slots.seenOf(s, KIND_ACCOUNTS, 'user-1')).toBe(1_001);
    expect(slots.seenOf(s, KIND_DEVICES, 'user-0')).toBeNull();
    expect(slots.countSince(s, KIND_ACCOUNTS, 1_003)).toBe(4); // user-0 (5,000), user-3, user-4, user-5
    expect(members(slots, s)).toContainEqual([KIND_DEVICES, 'device-1', 900]);
    // Seven members, all in its Maps now, each estimated as such.
    expect(slots.bytes).toBe(SLOT_BYTES + 5 * COUNT_BYTES + 7 * MEMBER_BYTES);
  });

  it('keeps the most recent SET_KEEP + 1 members of a set, and answers the one it let go', () => {
    const slots = new HistorySlots();
    const s = slots.take('acme', 'ip-1');
    for (let m = 0; m <= SET_KEEP; m++) expect(slots.touch(s, KIND_ACCOUNTS, `user-${m}`, 1_000 + m)).toBeNull();
    slots.touch(s, KIND_DEVICES, 'device-1', 1); // another kind, older than all: not the one to go
    expect(slots.touch(s, KIND_ACCOUNTS, 'user-new', 9_000)).toBe('auser-0');
    expect(slots.sizeOf(s, KIND_ACCOUNTS)).toBe(SET_KEEP + 1);
    expect(slots.seenOf(s, KIND_ACCOUNTS, 'user-0')).toBeNull();
    expect(slots.seenOf(s, KIND_DEVICES, 'device-1')).toBe(1);
    expect(slots.countSince(s, KIND_ACCOUNTS, 0)).toBe(SET_KEEP);
    // A window that starts past some members walks the set; the counts are a plain count's.
    const since = (t: number) => Math.min(SET_KEEP, members(slots, s).filter(([kind, , seen]) => kind === KIND_ACCOUNTS && seen >= t).length);
    for (const t of [1_050, 0, 1_100, 9_000, 9_001, 1_002]) expect(slots.countSince(s, KIND_ACCOUNTS, t)).toBe(since(t));
    slots.touch(s, KIND_ACCOUNTS, 'user-late', 500); // a clock behind: a member older than all
    for (const t of [0, 400, 600, 1_050]) expect(slots.countSince(s, KIND_ACCOUNTS, t)).toBe(since(t));

    // Under the cap: a member older than all, met after a count that needed no walk, is not counted in a window that starts after it.
    const d = slots.take('acme', 'user-x');
    for (let m = 0; m < MEMBERS_INLINE + 2; m++) slots.touch(d, KIND_DEVICES, `device-${m}`, 100 + m);
    expect(slots.countSince(d, KIND_DEVICES, 0)).toBe(MEMBERS_INLINE + 2);
    slots.touch(d, KIND_DEVICES, 'device-late', 50);
    expect(slots.countSince(d, KIND_DEVICES, 60)).toBe(MEMBERS_INLINE + 2);
    expect(slots.countSince(d, KIND_DEVICES, 0)).toBe(MEMBERS_INLINE + 3);

    // Members let go (as a prune does) leave the bound a lower one: the counts are still a plain count's.
    expect(slots.dropMembers(d, (_kind, _member, seen) => seen < 102)).toBe(3);
    const devices = (t: number) => members(slots, d).filter(([kind, , seen]) => kind === KIND_DEVICES && seen >= t).length;
    for (const t of [0, 101, 103, 106]) expect(slots.countSince(d, KIND_DEVICES, t)).toBe(devices(t));
    expect(slots.sizeOf(d, KIND_DEVICES)).toBe(MEMBERS_INLINE);
  });

  it('gives a slot taken again nothing of the key it held, and a new generation', () => {
    const slots = new HistorySlots();
    const first = slots.take('acme', 'k-1');
    for (let m = 0; m < 10; m++) {
      slots.count(first, hour(m), 1);
      slots.touch(first, KIND_DEVICES, `d-${m}`, m);
    }
    slots.firstSeen[first] = 5;
    const generation = slots.generation[first];
    slots.release(first);
    expect(slots.find('acme', 'k-1')).toBe(-1);
    expect(slots.held).toBe(0);
    expect(slots.bytes).toBe(0);

    const again = slots.take('acme', 'k-2');
    expect(again).toBe(first);
    expect(slots.generation[again]).toBe(generation! + 1);
    expect(slots.find('acme', 'k-2')).toBe(again);
    expect(counts(slots, again)).toEqual([]);
    expect(members(slots, again)).toEqual([]);
    expect(slots.firstSeen[again]).toBeNaN();
    // Back in its columns: the Maps the key before it needed went with it.
    slots.touch(again, KIND_DEVICES, 'd-x', 1);
    expect(slots.bytes).toBe(SLOT_BYTES);
  });

  it('keeps accounts apart, and grows its columns past their first size with every slot intact', () => {
    const slots = new HistorySlots();
    expect(slots.take('acme', 'same-key')).not.toBe(slots.take('globex', 'same-key'));
    for (let i = 0; i < 5_000; i++) {
      const s = slots.take('acme', `k-${i}`);
      slots.count(s, hour(i), i + 1);
      slots.touch(s, KIND_ACCOUNTS, `u-${i}`, i);
    }
    for (const i of [0, 1_023, 1_024, 4_999]) {
      const s = slots.find('acme', `k-${i}`);
      expect(slots.sum(s, 2, i - 1, i)).toBe(i + 1);
      expect(slots.seenOf(s, KIND_ACCOUNTS, `u-${i}`)).toBe(i);
    }
    expect([...slots.slots('globex')]).toEqual([slots.find('globex', 'same-key')]);
    expect(slots.held).toBe(5_002);
    expect(slots.bytes).toBe(5_002 * SLOT_BYTES);
  });
});
