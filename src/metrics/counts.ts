/** The value a label takes once its cap of distinct values is reached. */
export const OTHER = 'other';

/**
 * Counts kept per label value, as plain numbers: on the request path a count is a Map look-up and an
 * addition (prom-client's own `inc` builds, validates and hashes its label set on every call: some
 * five times the cost). The metrics export them when Prometheus scrapes.
 *
 * Capped: every series is memory here and in Prometheus, and some values (event types, custom rule
 * ids) come from accounts' rule files. Past `max` distinct values, a new one is counted as `other`.
 */
export class CappedCounts<V> {
  private readonly byValue = new Map<string, V>();

  /** `create` makes the counts of a value seen for the first time (e.g. `{ live: 0, dry_run: 0 }`). */
  constructor(
    readonly max: number,
    private readonly create: () => V,
  ) {}

  /** The counts of `value`, or of `other` once `max` values are kept. */
  of(value: string): V {
    const known = this.byValue.get(value);
    if (known !== undefined) return known;
    const label = this.byValue.size < this.max ? value : OTHER;
    let counts = this.byValue.get(label);
    if (counts === undefined) {
      counts = this.create();
      this.byValue.set(label, counts);
    }
    return counts;
  }

  entries(): IterableIterator<[string, V]> {
    return this.byValue.entries();
  }
}
