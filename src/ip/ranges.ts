import { buffers } from '../files/worker.js';
import { compareWords, type IpKey, type IpRange } from './numeric.js';

/**
 * A sorted table of disjoint address ranges, each carrying a value, searched by binary search:
 * O(log n) per look-up whatever the size (not a scan, unlike `net.BlockList`). Ranges are kept in
 * typed arrays (IPv4 as uint32, IPv6 as four uint32 words) so 100,000s of them cost a few MB.
 */
export class IpRangeTable<T> {
  private constructor(
    private readonly v4Starts: Uint32Array,
    private readonly v4Ends: Uint32Array,
    private readonly v4Values: Uint32Array,
    private readonly v6Starts: Uint32Array,
    private readonly v6Ends: Uint32Array,
    private readonly v6Values: Uint32Array,
    /** `null` when the values are the numbers in the value arrays themselves (`numbers`). */
    private readonly values: readonly T[] | null,
  ) {}

  /** The arrays and values, to hand to another thread: the arrays' buffers can be moved rather than copied. */
  parts(): IpRangeTableParts<T> {
    const { v4Starts, v4Ends, v4Values, v6Starts, v6Ends, v6Values, values } = this;
    return { v4Starts, v4Ends, v4Values, v6Starts, v6Ends, v6Values, values };
  }

  static fromParts<T>(p: IpRangeTableParts<T>): IpRangeTable<T> {
    return new IpRangeTable<T>(p.v4Starts, p.v4Ends, p.v4Values, p.v6Starts, p.v6Ends, p.v6Values, p.values);
  }

  /** Number of disjoint ranges held. */
  get size(): number {
    return this.v4Starts.length + this.v6Values.length;
  }

  get(ip: IpKey): T | undefined {
    const i = ip.version === 4 ? this.findV4(ip.v4) : this.findV6(ip.v6);
    if (i === -1) return undefined;
    const value = ip.version === 4 ? this.v4Values[i]! : this.v6Values[i]!;
    return this.values === null ? (value as T) : this.values[value];
  }

  has(ip: IpKey): boolean {
    return (ip.version === 4 ? this.findV4(ip.v4) : this.findV6(ip.v6)) !== -1;
  }

  private findV4(x: number): number {
    const starts = this.v4Starts;
    let lo = 0;
    let hi = starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! <= x) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found !== -1 && this.v4Ends[found]! >= x ? found : -1;
  }

  private findV6(x: Uint32Array): number {
    let lo = 0;
    let hi = this.v6Values.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (compareWords(this.v6Starts, mid * 4, x, 0) <= 0) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found !== -1 && compareWords(this.v6Ends, found * 4, x, 0) >= 0 ? found : -1;
  }

  /**
   * Collects ranges in any order. `merge` (for membership lists) joins overlapping and adjacent
   * ranges of equal value; `first` (for attribute data such as ASNs) never joins. Where ranges of
   * different values overlap, each address keeps the value of the range that starts first (of
   * equal starts, the one added first): a later range is cut to the part beyond the earlier one,
   * or dropped when nothing is left, and counted as `overlapping`. So the outcome depends on the
   * data only, and no address a range covers is left without a value.
   */
  static builder<T>(): IpRangeTableBuilder<T> {
    return new IpRangeTableBuilder<T>((...args) => new IpRangeTable<T>(...args), true);
  }

  /** The same for uint32 values kept as they are, not interned (indices into the caller's own arrays). */
  static numbers(): IpRangeTableBuilder<number> {
    return new IpRangeTableBuilder<number>((...args) => new IpRangeTable<number>(...args), false);
  }
}

export interface IpRangeTableParts<T> {
  v4Starts: Uint32Array;
  v4Ends: Uint32Array;
  v4Values: Uint32Array;
  v6Starts: Uint32Array;
  v6Ends: Uint32Array;
  v6Values: Uint32Array;
  values: readonly T[] | null;
}

/** The buffers to move with the parts (each array has its own: `build` makes them by `slice`). */
export function buffersOf(parts: IpRangeTableParts<unknown>): ArrayBuffer[] {
  return buffers(parts.v4Starts, parts.v4Ends, parts.v4Values, parts.v6Starts, parts.v6Ends, parts.v6Values);
}

type Make<T> = (
  v4Starts: Uint32Array, v4Ends: Uint32Array, v4Values: Uint32Array,
  v6Starts: Uint32Array, v6Ends: Uint32Array, v6Values: Uint32Array, values: readonly T[] | null,
) => IpRangeTable<T>;

class GrowableWords {
  data = new Uint32Array(1024);
  length = 0;
  reserve(n: number): void {
    if (this.length + n <= this.data.length) return;
    const bigger = new Uint32Array(Math.max(this.data.length * 2, this.length + n));
    bigger.set(this.data);
    this.data = bigger;
  }
  push(word: number): void {
    this.reserve(1);
    this.data[this.length++] = word;
  }
  pushWords(words: Uint32Array): void {
    this.reserve(4);
    this.data.set(words, this.length);
    this.length += 4;
  }
}

export class IpRangeTableBuilder<T> {
  private readonly values: T[] | null;
  private readonly valueIndex = new Map<T, number>();
  private readonly v4 = new GrowableWords(); // start, end, value
  private readonly v6 = new GrowableWords(); // start x4, end x4, value
  /** Ranges cut or dropped by `build` because they overlapped an earlier one of another value. */
  overlapping = 0;

  /** @param interned false when the values are uint32 numbers, kept as they are. */
  constructor(private readonly make: Make<T>, interned: boolean) {
    this.values = interned ? [] : null;
  }

  add(range: IpRange, value: T): void {
    if (range.version === 4) this.addV4(range.start, range.end, value);
    else this.addV6(range.start, range.end, value);
  }

  addV4(start: number, end: number, value: T): void {
    const index = this.indexOf(value);
    this.v4.push(start);
    this.v4.push(end);
    this.v4.push(index);
  }

  /** `start` and `end` are read at once (four words each), so callers may reuse their arrays. */
  addV6(start: Uint32Array, end: Uint32Array, value: T): void {
    const index = this.indexOf(value);
    this.v6.pushWords(start);
    this.v6.pushWords(end);
    this.v6.push(index);
  }

  private indexOf(value: T): number {
    if (this.values === null) return value as number;
    let index = this.valueIndex.get(value);
    if (index === undefined) {
      index = this.values.push(value) - 1;
      this.valueIndex.set(value, index);
    }
    return index;
  }

  build(mode: 'merge' | 'first'): IpRangeTable<T> {
    const v4 = this.buildV4(mode);
    const v6 = this.buildV6(mode);
    return this.make(v4.starts, v4.ends, v4.values, v6.starts, v6.ends, v6.values, this.values);
  }

  private buildV4(mode: 'merge' | 'first') {
    const src = this.v4.data;
    const n = this.v4.length / 3;
    const order = sortedOrder(n, (a, b) => src[a * 3]! - src[b * 3]! || a - b);
    const starts = new Uint32Array(n);
    const ends = new Uint32Array(n);
    const values = new Uint32Array(n);
    let m = 0;
    for (const i of order) {
      let start = src[i * 3]!;
      const end = src[i * 3 + 1]!;
      const value = src[i * 3 + 2]!;
      if (m > 0 && start <= ends[m - 1]!) {
        if (mode === 'merge' && values[m - 1] === value) {
          if (end > ends[m - 1]!) ends[m - 1] = end;
          continue;
        }
        this.overlapping++;
        if (end <= ends[m - 1]!) continue;
        start = ends[m - 1]! + 1;
      }
      if (mode === 'merge' && m > 0 && start === ends[m - 1]! + 1 && values[m - 1] === value) {
        ends[m - 1] = end;
        continue;
      }
      starts[m] = start;
      ends[m] = end;
      values[m] = value;
      m++;
    }
    return { starts: starts.slice(0, m), ends: ends.slice(0, m), values: values.slice(0, m) };
  }

  private buildV6(mode: 'merge' | 'first') {
    const src = this.v6.data;
    const n = this.v6.length / 9;
    const order = sortedOrder(n, (a, b) => compareWords(src, a * 9, src, b * 9) || a - b);
    const starts = new Uint32Array(n * 4);
    const ends = new Uint32Array(n * 4);
    const values = new Uint32Array(n);
    let m = 0;
    for (const i of order) {
      const at = i * 9;
      const value = src[at + 8]!;
      // The start, where it is: in `src`, or after a cut in a copy.
      let startWords: Uint32Array = src;
      let startAt = at;
      if (m > 0 && compareWords(src, at, ends, (m - 1) * 4) <= 0) {
        const beyond = compareWords(src, at + 4, ends, (m - 1) * 4) > 0;
        if (mode === 'merge' && values[m - 1] === value) {
          if (beyond) ends.set(src.subarray(at + 4, at + 8), (m - 1) * 4);
          continue;
        }
        this.overlapping++;
        if (!beyond) continue;
        startWords = addressAfter(ends, (m - 1) * 4);
        startAt = 0;
      }
      if (mode === 'merge' && m > 0 && values[m - 1] === value && followsDirectly(ends, (m - 1) * 4, startWords, startAt)) {
        ends.set(src.subarray(at + 4, at + 8), (m - 1) * 4);
        continue;
      }
      starts.set(startWords.subarray(startAt, startAt + 4), m * 4);
      ends.set(src.subarray(at + 4, at + 8), m * 4);
      values[m] = value;
      m++;
    }
    return { starts: starts.slice(0, m * 4), ends: ends.slice(0, m * 4), values: values.slice(0, m) };
  }
}

/** Indices 0..n-1 in the comparator's order; skips the sort when the input is already sorted (bundled data is). */
function sortedOrder(n: number, compare: (a: number, b: number) => number): Uint32Array {
  const order = new Uint32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    order[i] = i;
    if (i > 0 && sorted && compare(i - 1, i) > 0) sorted = false;
  }
  if (!sorted) order.sort(compare);
  return order;
}

/** Whether the address at `b[j]` is the one right after `a[i]` (a + 1 === b, with carry). */
function followsDirectly(a: Uint32Array, i: number, b: Uint32Array, j: number): boolean {
  let carry = 1;
  for (let w = 3; w >= 0; w--) {
    const sum = a[i + w]! + carry;
    const next = sum >>> 0;
    carry = sum > 0xffffffff ? 1 : 0;
    if (next !== b[j + w]) return false;
  }
  return carry === 0;
}

/** The address after the one at `words[i]` (never past the last address: only called below an end that is greater). */
function addressAfter(words: Uint32Array, i: number): Uint32Array {
  const next = words.slice(i, i + 4);
  for (let w = 3; w >= 0; w--) {
    next[w] = (next[w]! + 1) >>> 0;
    if (next[w] !== 0) break;
  }
  return next;
}
