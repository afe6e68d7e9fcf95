import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyFilter } from '../../src/store/history-key-filter.js';

describe('the history key filter (a new identifier costs no read of the file)', () => {
  it('never says "no" for a key it was given, and says "no" to almost every other', () => {
    // A small filter at the documented load (about 10 bits per key), to keep the test quick.
    const filter = keyFilter(2 ** 20);
    const added = Array.from({ length: 100_000 }, () => randomBytes(16));
    for (const key of added) filter.add(key);
    expect(added.every((key) => filter.mayHave(key))).toBe(true);
    let wrong = 0;
    for (let i = 0; i < 100_000; i++) if (filter.mayHave(randomBytes(16))) wrong += 1;
    // ~1 % expected at this load; a broken position function gives far more.
    expect(wrong / 100_000).toBeLessThan(0.03);
  });

  it('refuses a size that is not a power of two', () => {
    expect(() => keyFilter(1000)).toThrow(/power of two/);
  });
});
