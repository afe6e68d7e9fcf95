import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SourceStatus } from '../core/ports.js';
import { redactUrls, shownUrl } from './redact.js';
import type { SourceResult } from './run.js';
import { replaceAtomically } from './write.js';

/**
 * What the data job last did with each source it fetches, kept in `DATA_DIR` so the service can show
 * it: the URL, when it last fetched a copy that passed validation and how many entries that copy
 * had, and the last error (cleared by the next good fetch). A failed run keeps the last good fetch's
 * time and count: that copy is what serves. A source turned off (`skipped`) is dropped. No URL is
 * kept with its userinfo or query string, in a name, a URL or an error (redact.ts): they are where
 * a private mirror's credentials go.
 */
export const STATUS_FILE = '.data-update-status.json';

export interface FetchedSource {
  /** The job's name for it: `tor`, `cloud:aws`, `proxy:<URL>`… */
  source: string;
  /** The file in `DATA_DIR` it feeds. */
  file: string;
  url: string | null;
  last_good_at: string | null;
  entries: number | null;
  last_attempt_at: string;
  last_error: string | null;
}

/** At most this many sources are kept (the configured ones are far fewer): the file stays small. */
const MAX_SOURCES = 200;

export function mergeStatus(previous: FetchedSource[], results: SourceResult[], at: Date): FetchedSource[] {
  const byName = new Map(previous.map((p) => [p.source, p]));
  const stamp = at.toISOString();
  const next: FetchedSource[] = [];
  for (const r of results) {
    if (r.outcome === 'skipped') continue;
    const source = redactUrls(r.source);
    const before = byName.get(source);
    const url = r.url ?? before?.url ?? null;
    next.push(r.outcome === 'updated'
      ? { source, file: r.file, url: r.url === undefined ? null : redactUrls(r.url), last_good_at: stamp, entries: r.entries ?? null, last_attempt_at: stamp, last_error: null }
      : { source, file: r.file, url: url === null ? null : redactUrls(url), last_good_at: before?.last_good_at ?? null, entries: before?.entries ?? null, last_attempt_at: stamp, last_error: redactUrls(r.detail) });
  }
  return next.slice(0, MAX_SOURCES);
}

export function readStatusFile(dataDir: string): FetchedSource[] {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, STATUS_FILE), 'utf8')) as { sources?: unknown };
    if (!Array.isArray(parsed.sources)) return [];
    // A file written by hand, or by a version that kept URLs as written: no row is taken on trust.
    return (parsed.sources as Partial<FetchedSource>[])
      .filter((s) => typeof s?.source === 'string' && typeof s.file === 'string')
      .slice(0, MAX_SOURCES)
      .map((s) => ({
        source: redactUrls(s.source!),
        file: s.file!,
        url: typeof s.url === 'string' ? redactUrls(s.url) : null,
        last_good_at: typeof s.last_good_at === 'string' ? s.last_good_at : null,
        entries: typeof s.entries === 'number' ? s.entries : null,
        last_attempt_at: typeof s.last_attempt_at === 'string' ? s.last_attempt_at : '',
        last_error: typeof s.last_error === 'string' ? redactUrls(s.last_error) : null,
      }));
  } catch {
    return [];
  }
}

export async function writeStatusFile(dataDir: string, sources: FetchedSource[]): Promise<void> {
  await replaceAtomically(dataDir, STATUS_FILE, `${JSON.stringify({ sources }, null, 1)}\n`);
}

const EMAIL_KINDS = /^(disposable|agree|mx-hosts):/;

/**
 * A short, stable row name: `ip.fetched.tor`, `ip.fetched.cloud:aws`, and for the lists named by
 * URL the kind and the URL's file name (`ip.fetched.proxy:all.txt`; `#2` on a second of the same
 * name). The whole URL, redacted, is the row's source. A URL `new URL()` cannot parse (the job's
 * settings accept any `http(s)://` text, `https://[x` included) names the row as it is, redacted.
 */
function rowName(source: string, taken: Set<string>): string {
  const domain = EMAIL_KINDS.test(source) ? 'email' : 'ip';
  const url = /^([a-z-]+):(https?:\/\/.+)$/.exec(source);
  let name = `${domain}.fetched.${source}`;
  if (url) {
    let parsed: URL | null;
    try {
      parsed = new URL(url[2]!);
    } catch {
      parsed = null;
    }
    const last = parsed?.pathname.split('/').filter((p) => p !== '').at(-1) ?? parsed?.host;
    name = `${domain}.fetched.${url[1]}:${last ?? shownUrl(url[2]!)}`;
  }
  let unique = name;
  for (let n = 2; taken.has(unique); n++) unique = `${name}#${n}`;
  taken.add(unique);
  return unique;
}

/**
 * The job's record as data-source rows (the Data sources page, `/metrics`): `ip.fetched.<source>`
 * or `email.fetched.<source>`, the URL as its source, the last good fetch as its build date (so
 * `risk_data_source_age_seconds` is the time since it), that copy's entries, the last error.
 * Read again only when the file changes (its modification time), so a scrape costs a `stat`.
 */
export function fetchedSourceStatus(dataDir: string): () => SourceStatus[] {
  let seen: number | null = null;
  let rows: SourceStatus[] = [];
  return () => {
    let modified: number | null;
    try {
      modified = statSync(join(dataDir, STATUS_FILE)).mtimeMs;
    } catch {
      modified = null;
    }
    if (modified !== seen) {
      seen = modified;
      const taken = new Set<string>();
      rows = modified === null ? [] : readStatusFile(dataDir).map((s) => ({
        name: rowName(s.source, taken),
        source: s.url,
        type: `fetched into ${s.file}`,
        loaded: s.last_good_at !== null,
        build_date: s.last_good_at,
        entries: s.entries,
        error: s.last_error,
      }));
    }
    return rows;
  };
}
