import type { Counter } from 'prom-client';

/** The value a label takes once its cap of distinct values is reached. */
export const OTHER = 'other';

/**
 * A label's distinct values, capped: every series is memory in this process and in Prometheus, and
 * some values (event types, custom rule ids) come from accounts' rule files. Past `max` distinct
 * values a new one is reported as `other`.
 */
export class CappedLabel {
  private readonly seen = new Set<string>();

  constructor(readonly max: number) {}

  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OTHER;
    this.seen.add(value);
    return value;
  }
}

/**
 * Counts by label values, kept as plain numbers: on the request path a count is a Map look-up and an
 * addition (prom-client's own `inc` validates and hashes its labels on every call, about five times
 * the cost). `exportTo` hands the totals to a prom-client counter when it is scraped.
 */
export class CountsBy<L extends Record<string, string>> {
  private readonly counts = new Map<string, { labels: L; value: number }>();

  /** `key` is the label values joined, unique per label set; `labels` is built only the first time. */
  add(key: string, labels: () => L, value = 1): void {
    const entry = this.counts.get(key);
    if (entry !== undefined) entry.value += value;
    else this.counts.set(key, { labels: labels(), value });
  }

  get(key: string): number {
    return this.counts.get(key)?.value ?? 0;
  }

  exportTo(counter: Counter<string>): void {
    counter.reset();
    for (const { labels, value } of this.counts.values()) counter.inc(labels, value);
  }
}
