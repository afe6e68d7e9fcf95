import { publicSuffixOf } from './public-suffix.js';

/**
 * A set of domains where an entry also covers its subdomains: `mailinator.com` lists
 * `x.mailinator.com`. Never at or above a public suffix (PSL, private section included): an entry
 * `ddns.net` covers neither `ddns.net` nor `example.ddns.net`, and `amazonaws.com` does not cover
 * `x.s3.amazonaws.com`, so one careless entry in a vendor list cannot flag every customer of a
 * shared registry. Checked on a hit only, so a lookup that finds nothing costs no PSL lookup and
 * loading a list costs none at all.
 */
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

  /** The entry covering `domain` (itself or a parent below its public suffix), or `null`. Expects a normalised domain. */
  match(domain: string): string | null {
    const hit = this.longestEntryCovering(domain);
    return hit !== null && hit.length > publicSuffixOf(domain).length ? hit : null;
  }

  /** Walks up the parents by slicing at each dot (no arrays: this runs several times per new domain). */
  private longestEntryCovering(domain: string): string | null {
    if (this.entries.has(domain)) return domain;
    for (let from = domain.indexOf('.') + 1; from > 0; from = domain.indexOf('.', from) + 1) {
      const parent = domain.slice(from);
      if (this.entries.has(parent)) return parent;
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
