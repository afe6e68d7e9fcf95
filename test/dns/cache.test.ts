import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../src/dns/cache.js';

describe('TtlCache', () => {
  it('evicts the least recently used entry, counting hits on the newest one and on others alike', () => {
    const cache = new TtlCache<number>(3, () => 0);
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
    const cache = new TtlCache<string>(10, () => now);
    cache.set('a', 'x', 100);
    now = 99;
    expect(cache.get('a')).toBe('x');
    now = 100;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.set('a', 'y', 100);
    expect(cache.get('a')).toBe('y');
  });
});
