import { normalizeDomain } from './address.js';

export type ParsedList = { domains: string[] } | { error: string };

/** Larger than any real list (the biggest bundled one is ~3 MB); a bigger file is a mistake. */
export const MAX_LIST_BYTES = 32 * 1024 * 1024;

/**
 * One domain per line, `#` comments and blank lines ignored, a leading `*.` or `@` tolerated.
 * Every other line must be a domain: one bad line refuses the whole file (the caller keeps
 * the last good copy), because a half-read list is worse than a stale one.
 */
export function parseDomainList(text: string, file: string): ParsedList {
  const domains: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!.replace(/#.*$/, '').trim();
    if (line.length === 0) continue;
    const domain = normalizeDomain(line.replace(/^(\*\.|@)/, ''));
    if (domain === null) return { error: `${file}:${i + 1}: "${truncate(line)}" is not a domain` };
    domains.push(domain);
  }
  return { domains };
}

/** Vendor lists are data we do not control: entries that are not domains are skipped, the rest kept. */
export function normalizeAll(entries: readonly string[]): string[] {
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
