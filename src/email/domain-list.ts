/**
 * A set of domains where an entry also covers its subdomains: `mailinator.com` lists
 * `x.mailinator.com`. Without a Public Suffix List at hand, a parent that looks like a shared
 * registry suffix (`edu.pl`, `co.cc`, `web.id`: a generic second-level label under a TLD) only
 * matches itself, so one such entry in a vendor list cannot flag every university in Poland.
 */
const SHARED_SECOND_LEVEL = new Set(['ac', 'co', 'com', 'edu', 'go', 'gob', 'gov', 'ltd', 'mil', 'ne', 'net', 'nom', 'or', 'org', 'plc', 'sch', 'web']);

export class DomainList {
  private readonly entries: ReadonlySet<string>;

  constructor(domains: Iterable<string>) {
    this.entries = new Set(domains);
  }

  get size(): number {
    return this.entries.size;
  }

  has(domain: string): boolean {
    return this.entries.has(domain);
  }

  /** The entry covering `domain` (itself or a parent), or `null`. Expects a normalised domain. */
  match(domain: string): string | null {
    if (this.entries.has(domain)) return domain;
    // Walk up the parents by slicing at each dot (no arrays: this runs several times per request).
    let from = domain.indexOf('.') + 1;
    while (from > 0) {
      const next = domain.indexOf('.', from);
      if (next < 0) return null; // never a bare TLD
      const parent = domain.slice(from);
      const sharedSuffix = domain.indexOf('.', next + 1) < 0 && SHARED_SECOND_LEVEL.has(domain.slice(from, next));
      if (!sharedSuffix && this.entries.has(parent)) return parent;
      from = next + 1;
    }
    return null;
  }

  static union(...lists: Array<DomainList | Iterable<string>>): DomainList {
    const all = new Set<string>();
    for (const list of lists) for (const d of list instanceof DomainList ? list.entries : list) all.add(d);
    return new DomainList(all);
  }
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
