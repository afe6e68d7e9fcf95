import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../src/dns/cache.js';

/** One estimated byte per character of the value: easy to reason about in the tests below. */
const byLength = (_key: string, value: string) => value.length;

describe('TtlCache', () => {
  it('evicts the least recently used entry, counting hits on the newest one and on others alike', () => {
    const cache = new TtlCache<number>({ entries: 3, bytes: 1_000 }, () => 1, () => 0);
    cache.set('a', 1, 1000);
    cache.set('b', 2, 1000);
    cache.set('c', 3, 1000);
    expect(cache.get('c')).toBe(3); // already the newest: order unchanged
    expect(cache.get('a')).toBe(1); // a is now the newest; b the oldest
    expect(cache.get('a')).toBe(1);
    cache.set('d', 4, 1000);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('c'), cache.get('a'), cache.get('d')]).toEqual([3, 1, 4]);
    cache.set('e', 5, 1000); // c was used least recently
    expect(cache.get('c')).toBeUndefined();
    expect(cache.size).toBe(3);
  });

  it('forgets an entry once its time is up, even the newest', () => {
    let now = 0;
    const cache = new TtlCache<string>({ entries: 10, bytes: 1_000 }, byLength, () => now);
    cache.set('a', 'x', 100);
    now = 99;
    expect(cache.get('a')).toBe('x');
    now = 100;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
    cache.set('a', 'y', 100);
    expect(cache.get('a')).toBe('y');
  });

  it('holds its byte bound: large values push out as many of the least recently used as it takes', () => {
    const cache = new TtlCache<string>({ entries: 100, bytes: 10 }, byLength, () => 0);
    for (const key of ['a', 'b', 'c', 'd', 'e']) cache.set(key, 'xx', 1000);
    expect(cache.bytes).toBe(10);
    cache.get('a'); // b is now the least recently used
    cache.set('big', 'xxxxxx', 1000); // 6 bytes: b, c and d go
    expect([cache.get('b'), cache.get('c'), cache.get('d')]).toEqual([undefined, undefined, undefined]);
    expect([cache.get('a'), cache.get('e'), cache.get('big')]).toEqual(['xx', 'xx', 'xxxxxx']);
    expect(cache.bytes).toBe(10);
  });

  it('keeps no value larger than the whole bound, and keeps what it held', () => {
    const cache = new TtlCache<string>({ entries: 100, bytes: 10 }, byLength, () => 0);
    cache.set('a', 'xx', 1000);
    cache.set('huge', 'x'.repeat(11), 1000);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('a')).toBe('xx');
    expect(cache.bytes).toBe(2);
  });

  it('counts a replaced value once', () => {
    const cache = new TtlCache<string>({ entries: 100, bytes: 10 }, byLength, () => 0);
    cache.set('a', 'xxxx', 1000);
    cache.set('a', 'xx', 1000);
    expect([cache.size, cache.bytes]).toEqual([1, 2]);
  });
});
