import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { curateFreeProviders } from './free-providers.js';
import { normalizeAll } from './list-file.js';
import { NOT_DISPOSABLE } from './not-disposable.js';
import { majorProviderNear } from './typo.js';

const require = createRequire(import.meta.url);

/** A list shipped inside an npm dependency: always there, refreshed by upgrading the package. */
export interface BundledList {
  name: string;
  /** `package@version/file`, for `/readyz`. */
  source: string;
  /** Normalised, without the curated exceptions (entries that are public suffixes are kept: `DomainList` ignores them). */
  domains: string[];
  /** How many `domains` there were when loaded (a corroborating list's are let go once used). */
  entries: number;
}

export interface BundledLists {
  /** Lists each of which is enough on its own to call a domain disposable. */
  disposable: BundledList[];
  /**
   * Broad lists with more mistakes (they carry `yeah.net`, `tom.com`, `nus.edu.sg`, `zoho.com`): a
   * domain on one of them counts only when another has it too (`agreedDisposable`).
   */
  corroborating: BundledList[];
  /** The domains at least two corroborating lists have (many are on a `disposable` list too). */
  agreedDisposable: string[];
  freeProviders: BundledList;
  /** The few hundred mainstream providers (email-providers' common.json), corrected likewise. */
  majorFree: BundledList;
}

let loaded: BundledLists | undefined;

function packageVersion(pkg: string): string {
  return (require(`${pkg}/package.json`) as { version: string }).version;
}

function list(name: string, pkg: string, file: string, entries: unknown, without: ReadonlySet<string>): BundledList {
  if (!Array.isArray(entries) && !(entries instanceof Set)) throw new Error(`${pkg}/${file} is not a list of domains`);
  const domains = normalizeAll(entries as Iterable<unknown>).filter((d) => !without.has(d));
  return { name, source: `${pkg}@${packageVersion(pkg)}/${file}`, domains, entries: domains.length };
}

// Read, not `require`d: the module cache would keep every raw list for the life of the process.
const json = (pkg: string, file: string): unknown => JSON.parse(readFileSync(require.resolve(`${pkg}/${file}`), 'utf8'));
const lines = (pkg: string, file: string): string[] => readFileSync(require.resolve(`${pkg}/${file}`), 'utf8').split('\n');

/**
 * The vendor lists (licences and upkeep in docs/data.md):
 * - `disposable-domains` (tompec/disposable-email-domains, MIT): the maintained continuation of
 *   ivolo's list, by its main contributor; entries also cover their subdomains.
 * - `disposable-email-domains-js` (CC0): the disposable-email-domains/disposable-email-domains
 *   blocklist, reviewed entry by entry.
 * - `fakefilter` (7c/fakefilter, BSD-3-Clause): domains seen live at the temp-mail services it
 *   watches, published daily; none of the top mail domains.
 * - `mailchecker` (FGRibreau/mailchecker, MIT), `burner-email-providers` (findie, MIT),
 *   `@dahoom/disposable-email` (a daily npm copy of disposable/disposable, MIT) and `freemail`'s
 *   disposable.txt (ISC): broad lists that each add thousands of domains and a few real providers
 *   (`zoho.com`, `hushmail.com`, `21cn.com`); a domain counts where two of them agree.
 * - free providers: `email-providers` (all.json) and `freemail`'s free.txt, both corrected
 *   (`curateFreeProviders`).
 */
export function loadBundledLists(): BundledLists {
  // Package files do not change while the process runs: read and normalise them once.
  loaded ??= load();
  return loaded;
}

function load(): BundledLists {
  const notDisposable = new Set(NOT_DISPOSABLE);
  const disposable = [
    list('email.disposable.tompec', 'disposable-domains', 'index.json', json('disposable-domains', 'index.json'), notDisposable),
    list('email.disposable.blocklist', 'disposable-email-domains-js', 'dist/dict/disposable_email_blocklist.json', json('disposable-email-domains-js', 'dist/dict/disposable_email_blocklist.json'), notDisposable),
    list('email.disposable.fakefilter', 'fakefilter', 'txt/data.txt', lines('fakefilter', 'txt/data.txt'), notDisposable),
  ];
  const corroborating = [
    list('email.disposable.mailchecker', 'mailchecker', 'platform/node', mailcheckerDomains(), notDisposable),
    list('email.disposable.burner', 'burner-email-providers', 'emails.txt', lines('burner-email-providers', 'emails.txt'), notDisposable),
    list('email.disposable.disposable_github', '@dahoom/disposable-email', 'domains.json', json('@dahoom/disposable-email', 'domains.json'), notDisposable),
    list('email.disposable.freemail', 'freemail', 'data/disposable.txt', lines('freemail', 'data/disposable.txt'), notDisposable),
  ];
  const vendorFree = list('email.free_provider', 'email-providers', 'all.json', json('email-providers', 'all.json'), new Set());
  const freemailFree = list('email.free_provider.freemail', 'freemail', 'data/free.txt', lines('freemail', 'data/free.txt'), new Set());
  // One list for the status page: its source names both packages, its entries are the union's.
  const freeVendor: BundledList = {
    ...vendorFree,
    source: `${vendorFree.source}, ${freemailFree.source}`,
    domains: [...new Set([...vendorFree.domains, ...freemailFree.domains])],
  };
  const majorVendor = list('email.free_provider.common', 'email-providers', 'common.json', json('email-providers', 'common.json'), new Set());
  const isTypo = (domain: string) => majorProviderNear(domain) !== null;
  const freeDomains = new Set(curateFreeProviders(freeVendor.domains, isTypo));
  const agreedDisposable = onTwoOrMore(corroborating);
  for (const l of corroborating) l.domains = [];
  return {
    disposable,
    corroborating,
    agreedDisposable,
    freeProviders: corrected(freeVendor, [...freeDomains]),
    // The mainstream set is the common list as corrected, and only what the corrected list keeps.
    majorFree: corrected(majorVendor, majorVendor.domains.filter((d) => freeDomains.has(d))),
  };
}

function corrected(list: BundledList, domains: string[]): BundledList {
  return { ...list, domains, entries: domains.length };
}

/** mailchecker ships its list only inside its module: read it, then let the module go. */
function mailcheckerDomains(): Set<string> {
  const path = require.resolve('mailchecker/platform/node');
  const domains = (require(path) as { blacklist(): Set<string> }).blacklist();
  Reflect.deleteProperty(require.cache, path);
  return domains;
}

/** The domains on at least two of the lists. */
function onTwoOrMore(lists: BundledList[]): string[] {
  const seen = new Set<string>();
  const agreed = new Set<string>();
  for (const l of lists) {
    for (const d of new Set(l.domains)) {
      if (seen.has(d)) agreed.add(d);
      else seen.add(d);
    }
  }
  return [...agreed];
}
