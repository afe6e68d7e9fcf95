/** A cache's bounds: both hold at every moment. */
export interface CacheLimits {
  entries: number;
  /** Estimated bytes, by the cache's `sizeOf` (the estimate each user documents). */
  bytes: number;
}

/**
 * A cache bounded in entries and in estimated bytes, least recently used out first. Each entry
 * carries its own expiry (set by the caller, e.g. from the record TTLs); `now` is injected so tests
 * move time instead of waiting. A value estimated larger than the whole byte bound is not kept.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number; bytes: number }>();
  /** The most recently used key: a hit on it needs no reordering (a delete and re-insert per hit cost a rehash). */
  private newest: string | undefined;
  private used = 0;

  constructor(
    readonly limits: CacheLimits,
    private readonly sizeOf: (key: string, value: V) => number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Estimated bytes held, by `sizeOf`. */
  get bytes(): number {
    return this.used;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    if (key !== this.newest) {
      // Re-inserting moves the key to the end: Map order is the recency order.
      this.entries.delete(key);
      this.entries.set(key, entry);
      this.newest = key;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.delete(key);
    const bytes = this.sizeOf(key, value);
    if (bytes > this.limits.bytes || this.limits.entries < 1) return;
    while (this.entries.size > 0 && (this.entries.size >= this.limits.entries || this.used + bytes > this.limits.bytes)) {
      this.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs, bytes });
    this.used += bytes;
    this.newest = key;
  }

  clear(): void {
    this.entries.clear();
    this.used = 0;
    this.newest = undefined;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.bytes;
    if (key === this.newest) this.newest = undefined;
  }
}
