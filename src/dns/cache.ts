/**
 * A cache bounded in entries, least recently used out first. Each entry carries its own expiry
 * (set by the caller from the record TTLs); `now` is injected so tests move time instead of waiting.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  /** The most recently used key: a hit on it needs no reordering (a delete and re-insert per hit cost a rehash). */
  private newest: string | undefined;

  constructor(
    readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
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
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    this.newest = key;
  }

  clear(): void {
    this.entries.clear();
    this.newest = undefined;
  }
}
