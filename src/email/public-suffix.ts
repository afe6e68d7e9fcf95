import { createRequire } from 'node:module';
import { getPublicSuffix } from 'tldts';

/**
 * The Public Suffix List (https://publicsuffix.org), ICANN and private sections, as bundled by
 * `tldts` (offline; refreshed by upgrading the package). A public suffix is where anyone can
 * register a name of their own: `co.uk`, but also `ddns.net`, `cloudns.asia` or `my.id`. An entry
 * on a domain list never stands for every name under a public suffix: that would make every
 * customer of a dynamic-DNS service disposable because one of them ran a throw-away inbox.
 */
const OPTIONS = { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false, mixedInputs: false } as const;

/** The public suffix of a normalised domain (its last label when the list has no rule for it). */
export function publicSuffixOf(domain: string): string {
  return getPublicSuffix(domain, OPTIONS) ?? domain.slice(domain.lastIndexOf('.') + 1);
}

export function isPublicSuffix(domain: string): boolean {
  return publicSuffixOf(domain) === domain;
}

/** `tldts@version`, for `/readyz`: the list is as recent as the package. */
export const PUBLIC_SUFFIX_SOURCE = `tldts@${(createRequire(import.meta.url)('tldts/package.json') as { version: string }).version}`;
