import { buffers } from '../files/worker.js';
import { publicSuffixOf } from './public-suffix.js';

/**
 * A set of domains where an entry also covers its subdomains: `mailinator.com` lists
 * `x.mailinator.com`. Never at or above a public suffix (PSL, private section included): an entry
 * `ddns.net` covers neither `ddns.net` nor `example.ddns.net`, and `amazonaws.com` does not cover
 * `x.s3.amazonaws.com`, so one careless entry in a vendor list cannot flag every customer of a
 * shared registry. Checked on a hit only, so a lookup that finds nothing costs no PSL lookup and
 * loading a list costs none at all.
 *
 * Held in typed arrays (the domains' characters one after another, and an open-addressing hash
 * table of their positions) rather than a `Set` of strings: a DATA_DIR list is built in a worker
 * thread (src/files/worker.ts), and typed arrays move back to the event loop's thread for free,
 * where a `Set` would be rebuilt there, rehashing itself whole as it grows (tens of milliseconds
 * at 200,000 domains) and leaving the collector 200,000 strings to copy. They are also smaller
 * and outside the JavaScript heap. A look-up hashes the domain once, its parents in the same
 * pass, and compares characters only where the hashes agree: faster than the `Set` it replaces
 * (bench/email-lists.ts).
 */
export class DomainList implements DomainMatcher {
  private readonly chars: Uint8Array;
  private readonly bounds: Uint32Array;
  private readonly hashes: Int32Array;
  private readonly slots: Int32Array;
  readonly size: number;

  private constructor(parts: DomainListParts) {
    ({ chars: this.chars, bounds: this.bounds, hashes: this.hashes, slots: this.slots, size: this.size } = parts);
  }

  /** Collects domains as a file is read. */
  static builder(): DomainListBuilder {
    return new DomainListBuilder((parts) => new DomainList(parts));
  }

  /** A list of every domain given (normalised: ASCII). */
  static of(...lists: Iterable<string>[]): DomainList {
    const builder = DomainList.builder();
    for (const list of lists) for (const domain of list) builder.add(domain);
    return builder.build();
  }

  /** A list built in another thread, from its parts. */
  static fromParts(parts: DomainListParts): DomainList {
    return new DomainList(parts);
  }

  /** The arrays, to hand to another thread: their buffers can be moved rather than copied. */
  parts(): DomainListParts {
    const { chars, bounds, hashes, slots, size } = this;
    return { chars, bounds, hashes, slots, size };
  }

  has(domain: string): boolean {
    return this.size > 0 && this.holds(domain, 0, hashOf(domain));
  }

  /** The entry covering `domain` (itself or a parent below its public suffix), or `null`. Expects a normalised domain. */
  match(domain: string): string | null {
    if (this.size === 0) return null;
    const hit = this.longestEntryCovering(domain);
    return hit !== null && hit.length > publicSuffixOf(domain).length ? hit : null;
  }

  /**
   * A parent is a suffix of the domain, so one pass from the right gives the hash of the domain
   * and of every parent (`hashOf` reads from the right too); they are then looked up longest first.
   */
  private longestEntryCovering(domain: string): string | null {
    let labels = 0;
    let hash = FNV_OFFSET;
    for (let i = domain.length - 1; i >= 0 && labels < MAX_LABELS; i--) {
      hash = Math.imul(hash ^ domain.charCodeAt(i), FNV_PRIME);
      if (i === 0 || domain.charCodeAt(i - 1) === DOT) {
        LABEL_AT[labels] = i;
        LABEL_HASH[labels++] = fold(hash);
      }
    }
    for (let k = labels - 1; k >= 0; k--) {
      if (this.holds(domain, LABEL_AT[k]!, LABEL_HASH[k]!)) return domain.slice(LABEL_AT[k]);
    }
    return null;
  }

  /** The entries, in no particular order. */
  *[Symbol.iterator](): Iterator<string> {
    for (const slot of this.slots) if (slot !== 0) yield LATIN1.decode(this.chars.subarray(this.bounds[slot - 1], this.bounds[slot]));
  }

  /** Whether `domain.slice(from)`, whose hash is `hash`, is an entry: compared in place, no string made. */
  private holds(domain: string, from: number, hash: number): boolean {
    const { chars, bounds, hashes, slots } = this;
    const mask = slots.length - 1;
    const length = domain.length - from;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const slot = slots[at]!;
      if (slot === 0) return false;
      const e = slot - 1;
      const start = bounds[e]!;
      if (hashes[e] !== hash || bounds[e + 1]! - start !== length) continue;
      let i = 0;
      while (i < length && chars[start + i] === domain.charCodeAt(from + i)) i++;
      if (i === length) return true;
    }
  }
}

export interface DomainListParts {
  /** The entries' characters: entry `e` is `chars[bounds[e] .. bounds[e + 1])`. */
  chars: Uint8Array;
  bounds: Uint32Array;
  /** Each entry's hash (`hashOf`). */
  hashes: Int32Array;
  /** Entry + 1 at the slot its hash picks, or the next free one after it; 0 is free. At most half full. */
  slots: Int32Array;
  /** Entries, each domain once. */
  size: number;
}

/** The buffers to move with the parts (each array has its own: `build` makes them by `slice`). */
export function buffersOf(parts: DomainListParts): ArrayBuffer[] {
  return buffers(parts.chars, parts.bounds, parts.hashes, parts.slots);
}

/** Appends domains, then makes the table, sized once. A domain added twice is held once. */
export class DomainListBuilder {
  private chars = new Uint8Array(1024);
  private bounds = new Uint32Array(65);
  private hashes = new Int32Array(64);
  private count = 0;

  constructor(private readonly make: (parts: DomainListParts) => DomainList) {}

  /** A normalised domain: ASCII only (non-ASCII names are in their punycode form). */
  add(domain: string): void {
    const start = this.bounds[this.count]!;
    const end = start + domain.length;
    if (end > this.chars.length) this.chars = grown(this.chars, end);
    if (this.count === this.hashes.length) {
      this.hashes = grown(this.hashes, this.count + 1);
      this.bounds = grown(this.bounds, this.count + 2);
    }
    const chars = this.chars;
    let hash = FNV_OFFSET;
    for (let i = domain.length - 1; i >= 0; i--) {
      const c = domain.charCodeAt(i);
      if (c > 0x7f) throw new TypeError(`not a normalised domain: ${JSON.stringify(domain)}`);
      chars[start + i] = c;
      hash = Math.imul(hash ^ c, FNV_PRIME);
    }
    this.hashes[this.count++] = fold(hash);
    this.bounds[this.count] = end;
  }

  build(): DomainList {
    const n = this.count;
    let capacity = 16;
    while (capacity < n * 2) capacity *= 2;
    // Exact sizes: the spare half of each doubled array is let go.
    const chars = this.chars.slice(0, this.bounds[n]);
    const bounds = this.bounds.slice(0, n + 1);
    const hashes = this.hashes.slice(0, n);
    const slots = new Int32Array(capacity);
    const size = insertEntries(chars, bounds, hashes, slots);
    return this.make({ chars, bounds, hashes, slots, size });
  }
}

/** Puts every entry in the table, except those already there; returns how many went in. */
function insertEntries(chars: Uint8Array, bounds: Uint32Array, hashes: Int32Array, slots: Int32Array): number {
  const mask = slots.length - 1;
  let added = 0;
  for (let e = 0; e < hashes.length; e++) {
    const hash = hashes[e]!;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const slot = slots[at]!;
      if (slot === 0) {
        slots[at] = e + 1;
        added++;
        break;
      }
      if (hashes[slot - 1] === hash && sameEntry(chars, bounds, slot - 1, e)) break;
    }
  }
  return added;
}

function sameEntry(chars: Uint8Array, bounds: Uint32Array, a: number, b: number): boolean {
  const length = bounds[a + 1]! - bounds[a]!;
  if (bounds[b + 1]! - bounds[b]! !== length) return false;
  for (let i = 0; i < length; i++) if (chars[bounds[a]! + i] !== chars[bounds[b]! + i]) return false;
  return true;
}

function grown<A extends Uint8Array | Uint32Array | Int32Array>(array: A, atLeast: number): A {
  let length = array.length * 2;
  while (length < atLeast) length *= 2;
  const bigger = new (array.constructor as new (length: number) => A)(length);
  bigger.set(array);
  return bigger;
}

const LATIN1 = new TextDecoder('latin1');
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const DOT = 46;
/** A domain has at most 127 labels (253 characters). */
const MAX_LABELS = 128;
/** Scratch for `longestEntryCovering`: where each suffix starts and its hash, shortest first. */
const LABEL_AT = new Int32Array(MAX_LABELS);
const LABEL_HASH = new Int32Array(MAX_LABELS);

/** FNV-1a over the characters of `domain`, read from the right. */
function hashOf(domain: string): number {
  let hash = FNV_OFFSET;
  for (let i = domain.length - 1; i >= 0; i--) hash = Math.imul(hash ^ domain.charCodeAt(i), FNV_PRIME);
  return fold(hash);
}

/** The high bits folded into the low ones, which pick the slot. */
function fold(hash: number): number {
  return hash ^ (hash >>> 16);
}

/** What a check needs from a list: exact membership and the covering entry. */
export interface DomainMatcher {
  readonly size: number;
  has(domain: string): boolean;
  match(domain: string): string | null;
}

/**
 * Several lists read as one, without copying: a small DATA_DIR file reloaded next to the 130k
 * bundled entries must not rebuild (and make the collector free) a 130k-entry set each time.
 */
export function combine(lists: DomainMatcher[]): DomainMatcher {
  return {
    size: lists.reduce((n, l) => n + l.size, 0),
    has: (domain) => lists.some((l) => l.has(domain)),
    match(domain) {
      for (const list of lists) {
        const hit = list.match(domain);
        if (hit !== null) return hit;
      }
      return null;
    },
  };
}
