/**
 * Which history identifiers the SQLite file may hold: a Bloom filter over their keyed hashes, so
 * that an identifier never seen costs no read of the file on the request path (issue 24: for a new
 * person every request, those reads were 18 % of the main thread). "No" is certain: every key the
 * file holds was added when the file was opened or when an event first touched it in memory. "Yes"
 * may be wrong (about 1 % at 7 million identifiers, more past that): it costs only the read that
 * every identifier cost before. Erased identifiers stay in the filter (a read that finds nothing).
 *
 * Bounded: a fixed 8 MiB whatever the history holds. The keys are HMAC output (uniform), so the
 * filter's positions are read straight from their bytes, with no hashing of its own.
 */
export const KEY_FILTER_BITS = 2 ** 26;
/** Positions per key: the optimum for ~1 % false positives. */
const PROBES = 7;

export interface KeyFilter {
  add(key: Uint8Array): void;
  /** False: the key is certainly not in the file. */
  mayHave(key: Uint8Array): boolean;
}

export function keyFilter(bits = KEY_FILTER_BITS): KeyFilter {
  if (bits < 32 || (bits & (bits - 1)) !== 0) throw new Error('the key filter size must be a power of two');
  const words = new Uint32Array(bits / 32);
  const mask = bits - 1;
  // Double hashing (Kirsch–Mitzenmacher) from two 32-bit words of the key.
  const h1 = (key: Uint8Array) => (key[0]! | (key[1]! << 8) | (key[2]! << 16) | (key[3]! << 24)) >>> 0;
  const h2 = (key: Uint8Array) => (key[4]! | (key[5]! << 8) | (key[6]! << 16) | (key[7]! << 24) | 1) >>> 0;
  return {
    add(key) {
      const a = h1(key);
      const b = h2(key);
      for (let i = 0; i < PROBES; i++) {
        const bit = ((a + Math.imul(i, b)) >>> 0) & mask;
        words[bit >>> 5]! |= 1 << (bit & 31);
      }
    },
    mayHave(key) {
      const a = h1(key);
      const b = h2(key);
      for (let i = 0; i < PROBES; i++) {
        const bit = ((a + Math.imul(i, b)) >>> 0) & mask;
        if ((words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
      }
      return true;
    },
  };
}
