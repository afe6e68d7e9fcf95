import { normalizeDomain } from './address.js';
import { isPublicSuffix } from './public-suffix.js';

/** `publicSuffixes`: entries left out because they are public suffixes (`DomainList` would ignore them). */
export type ParsedList = { domains: string[]; publicSuffixes: string[] } | { error: string };

/** Larger than any real list (the biggest bundled one is ~3 MB); a bigger file is a mistake. */
export const MAX_LIST_BYTES = 32 * 1024 * 1024;

/**
 * One domain per line, `#` comments and blank lines ignored, a leading `*.` or `@` tolerated.
 * Every other line must be a domain: one bad line refuses the whole file (the caller keeps
 * the last good copy), because a half-read list is worse than a stale one. A public suffix
 * (`ddns.net`) is a domain but not an entry a list may hold: it is left out and reported.
 */
export function parseDomainList(text: string, file: string): ParsedList {
  const domains: string[] = [];
  const publicSuffixes: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!.replace(/#.*$/, '').trim();
    if (line.length === 0) continue;
    const domain = normalizeDomain(line.replace(/^(\*\.|@)/, ''));
    if (domain === null) return { error: `${file}:${i + 1}: "${truncate(line)}" is not a domain` };
    (isPublicSuffix(domain) ? publicSuffixes : domains).push(domain);
  }
  return { domains, publicSuffixes };
}

/** Vendor lists are data we do not control: entries that are not domains are skipped, the rest kept. */
export function normalizeAll(entries: Iterable<unknown>): string[] {
  const out: string[] = [];
  for (const entry of entries) {
    const domain = typeof entry === 'string' ? normalizeDomain(entry.trim()) : null;
    if (domain !== null) out.push(domain);
  }
  return out;
}

function truncate(line: string): string {
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}
