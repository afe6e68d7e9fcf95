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
    const labels = domain.split('.');
    // Parents only, and never a bare TLD.
    for (let i = 1; i < labels.length - 1; i += 1) {
      const parent = labels.slice(i).join('.');
      if (i === labels.length - 2 && SHARED_SECOND_LEVEL.has(labels[i]!)) continue;
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
