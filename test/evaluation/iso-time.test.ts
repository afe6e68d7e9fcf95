import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/core/iso-time.js';

describe('isoTime', () => {
  it('writes what Date#toISOString writes, across seconds, in any order', () => {
    const ms = fc.oneof(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), fc.integer({ min: -2_000, max: 2_000 }), fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }));
    fc.assert(
      fc.property(fc.array(ms, { minLength: 1, maxLength: 20 }), (times) => {
        for (const t of times) expect(isoTime(t)).toBe(new Date(t).toISOString());
      }),
      { numRuns: 2_000 },
    );
  });

  it('writes the years Date writes with six digits, and throws as Date does out of its range, keeping nothing', () => {
    for (const t of [-62_167_219_200_001, 253_402_300_800_000, 8.64e15]) expect(isoTime(t)).toBe(new Date(t).toISOString());
    expect(() => isoTime(8.64e15 + 1_000)).toThrow(RangeError);
    // The slot that second would have taken still answers for its own second.
    const t = 1_700_000_000_123;
    expect(isoTime(t)).toBe(new Date(t).toISOString());
    expect(() => isoTime(t + 8.64e15)).toThrow(RangeError);
    expect(isoTime(t)).toBe(new Date(t).toISOString());
  });
});
