import { createRequire } from 'node:module';
import { normalizeAll } from './list-file.js';

const require = createRequire(import.meta.url);

/** A list shipped inside an npm dependency: always there, refreshed by upgrading the package. */
export interface BundledList {
  name: string;
  /** `package@version/file`, for `/readyz`. */
  source: string;
  domains: string[];
}

export interface BundledLists {
  disposable: BundledList[];
  freeProviders: BundledList;
  /** The few hundred mainstream providers (email-providers' common.json). */
  majorFree: BundledList;
}

let loaded: BundledLists | undefined;

function load(name: string, pkg: string, file: string): BundledList {
  const { version } = require(`${pkg}/package.json`) as { version: string };
  const raw = require(`${pkg}/${file}`) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${pkg}/${file} is not a list of domains`);
  return { name, source: `${pkg}@${version}/${file}`, domains: normalizeAll(raw as string[]) };
}

/**
 * The vendor lists. `disposable-email-domains` (ivolo) is the owner's choice but has not been
 * updated since 2023; `disposable-email-domains-js` tracks the maintained
 * disposable-email-domains/disposable-email-domains blocklist. Its wildcard file lists services
 * that hand out whole subdomains, which the parent matching of DomainList covers.
 */
export function loadBundledLists(): BundledLists {
  // Package files do not change while the process runs: read and normalise them once.
  loaded ??= {
    disposable: [
      load('email.disposable.ivolo', 'disposable-email-domains', 'index.json'),
      load('email.disposable.ivolo_wildcard', 'disposable-email-domains', 'wildcard.json'),
      load('email.disposable.blocklist', 'disposable-email-domains-js', 'dist/dict/disposable_email_blocklist.json'),
    ],
    freeProviders: load('email.free_provider', 'email-providers', 'all.json'),
    majorFree: load('email.free_provider.common', 'email-providers', 'common.json'),
  };
  return loaded;
}
