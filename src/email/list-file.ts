import { FILE_CAPS } from '../files/caps.js';
import { readLines } from '../files/read.js';
import { inWorker, type Moved } from '../files/worker.js';
import { normalizeDomain } from './address.js';
import { buffersOf, DomainList, type DomainListParts } from './domain-list.js';
import { isPublicSuffix } from './public-suffix.js';

/** `publicSuffixes`: entries left out because they are public suffixes (`DomainList` would ignore them). */
export type ParsedList = { list: DomainList; publicSuffixes: string[] } | { error: string };

/**
 * One domain per line, `#` comments and blank lines ignored, a leading `*.` or `@` tolerated.
 * Every other line must be a domain: one bad line refuses the whole file (the caller keeps
 * the last good copy), because a half-read list is worse than a stale one. A public suffix
 * (`ddns.net`) is a domain but not an entry a list may hold: it is left out and reported.
 */
export function parseDomainList(text: string, file: string): ParsedList {
  const reader = new DomainListReader(file);
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && reader.line(lines[i]!, i + 1); i += 1);
  return reader.result();
}

/** The same, one line at a time, so a file is parsed as it is read (readLines), never held whole. */
export class DomainListReader {
  private readonly builder = DomainList.builder();
  private readonly publicSuffixes: string[] = [];
  private error: string | null = null;

  constructor(private readonly file: string) {}

  /** False once a line is not a domain: the rest need not be read. */
  line(raw: string, number: number): boolean {
    // A CRLF file's lines end in `\r`, which `.` does not match: drop it before the comment.
    const line = raw.replace(/\r$/, '').replace(/#.*$/, '').trim();
    if (line.length === 0) return true;
    const domain = normalizeDomain(line.replace(/^(\*\.|@)/, ''));
    if (domain === null) {
      this.error = `${this.file}:${number}: "${truncate(line)}" is not a domain`;
      return false;
    }
    if (isPublicSuffix(domain)) this.publicSuffixes.push(domain);
    else this.builder.add(domain);
    return true;
  }

  result(): ParsedList {
    return this.error === null ? { list: this.builder.build(), publicSuffixes: this.publicSuffixes } : { error: this.error };
  }
}

/**
 * A DATA_DIR list file, read, checked and built in a worker thread (src/files/worker.ts): a file at
 * its cap is a quarter of a second of work the event loop does not wait for.
 */
export async function loadDomainListFile(path: string, signal?: AbortSignal): Promise<ListFile> {
  const built = await inWorker<BuiltListFile>(import.meta.url, buildDomainListFile.name, [path], { signal });
  return 'error' in built ? built : { ...built, list: DomainList.fromParts(built.list) };
}

export type ListFile = { list: DomainList; publicSuffixes: string[]; modified: Date } | { error: string };
type BuiltListFile = { list: DomainListParts; publicSuffixes: string[]; modified: Date } | { error: string };

/** The worker's half of `loadDomainListFile`: the list's arrays are moved back, not copied. */
export async function buildDomainListFile(path: string): Promise<Moved<BuiltListFile>> {
  const reader = new DomainListReader(path);
  const { modified } = await readLines(path, FILE_CAPS.domainList, (line, number) => reader.line(line, number));
  const parsed = reader.result();
  if ('error' in parsed) return { value: parsed, transfer: [] };
  const list = parsed.list.parts();
  return { value: { list, publicSuffixes: parsed.publicSuffixes, modified }, transfer: buffersOf(list) };
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
