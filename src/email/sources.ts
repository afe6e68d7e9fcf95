import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { SourceStatus } from '../core/ports.js';
import { watchFiles, type FileWatcher } from '../files/watch.js';
import { loadBundledLists, type BundledList } from './bundled.js';
import type { DisposableData } from './disposable.js';
import { DISPOSABLE_MX_HOSTS } from './disposable-mx-hosts.js';
import { combine, DomainList, type DomainMatcher } from './domain-list.js';
import { loadDomainListFile } from './list-file.js';
import { MAJOR_MAIL_HOSTS } from './major-mail-hosts.js';
import { PUBLIC_SUFFIX_SOURCE } from './public-suffix.js';
import { RELAY_DOMAINS } from './relay.js';

/** The lists one inspection reads, swapped as a whole when a file changes. */
export interface EmailData {
  disposable: DisposableData;
  freeProviders: DomainList;
}

export interface EmailSources {
  current(): EmailData;
  status(): SourceStatus[];
  /** Checks the DATA_DIR files now, as the poller does every `reloadIntervalMs`. */
  refresh(): Promise<void>;
  close(): void;
}

/** An operator's file in DATA_DIR. `list` is the last good copy; `null` when there is none. */
interface DataFile {
  name: string;
  path: string;
  list: DomainList | null;
  modified: string | null;
  error: string | null;
}

export const DATA_FILES = {
  additions: 'disposable-domains.txt',
  allowlist: 'disposable-allowlist.txt',
  mxHosts: 'disposable-mx-hosts.txt',
  /** Written by the data job: the domains two fresh broad lists agree on. */
  agreed: 'disposable-agreed.txt',
} as const;

export async function openEmailSources(options: { dataDir: string; reloadIntervalMs: number; logger: Logger }): Promise<EmailSources> {
  const { logger } = options;
  const bundled = loadBundledLists();
  const { bundledDisposable, relays, freeList, mainstream, builtInMxHosts, majorHosts } = bundledMatchers(bundled);
  const files = {
    additions: dataFile('email.disposable.additions', join(options.dataDir, DATA_FILES.additions)),
    allowlist: dataFile('email.disposable.allowlist', join(options.dataDir, DATA_FILES.allowlist)),
    mxHosts: dataFile('email.disposable.mx_hosts.additions', join(options.dataDir, DATA_FILES.mxHosts)),
    agreed: dataFile('email.disposable.agreed.fetched', join(options.dataDir, DATA_FILES.agreed)),
  };

  // Only combines lists already built: a reload builds just the file that changed (in a worker).
  const build = (): EmailData => ({
    disposable: {
      listed: combine([bundledDisposable, files.additions.list ?? NO_DOMAINS, files.agreed.list ?? NO_DOMAINS]),
      allowed: files.allowlist.list ?? NO_DOMAINS,
      mxHosts: neverMajor(combine([builtInMxHosts, files.mxHosts.list ?? NO_DOMAINS]), majorHosts),
      relays,
      mainstream,
    },
    freeProviders: freeList,
  });

  // Closing ends a read in progress (its worker is terminated) rather than waiting for it.
  const closing = new AbortController();
  const reload = async (file: DataFile): Promise<void> => {
    const read = await readDataFile(file.path, closing.signal);
    if ('error' in read) {
      file.error = read.error;
      logger.error({ file: file.path, err: read.error }, `Refused ${file.path}; ${file.list ? 'the last good copy stays' : 'no copy loaded'}`);
      return;
    }
    file.error = null;
    file.list = read.list;
    file.modified = read.modified;
    if (read.list === null) logger.info({ file: file.path }, `${file.path} is absent`);
    else logger.info({ file: file.path, entries: read.list.size }, `Loaded ${file.path}`);
    if (read.publicSuffixes.length > 0) {
      logger.warn({ file: file.path, public_suffixes: read.publicSuffixes.slice(0, 20) }, `${file.path}: ${read.publicSuffixes.length} public suffixes left out (an entry there would cover every customer's domain under it)`);
    }
  };

  // Watch first, then read: a change landing between the two is read now and again at the next
  // poll, never missed.
  const byPath = new Map(Object.values(files).map((f) => [f.path, f]));
  let data = build(); // bundled lists only, until the files are read below
  const watcher: FileWatcher = await watchFiles(
    [...byPath.keys()],
    async (path) => {
      await reload(byPath.get(path)!);
      data = build();
    },
    options.reloadIntervalMs,
  );
  for (const file of Object.values(files)) await reload(file);
  data = build();

  const bundledStatus = (list: BundledList, entries = list.entries): SourceStatus => ({
    name: list.name,
    source: list.source,
    type: 'list',
    loaded: true,
    build_date: null,
    entries,
    error: null,
  });
  const builtIn = (name: string, entries: number): SourceStatus => ({
    name,
    source: 'built-in',
    type: 'list',
    loaded: true,
    build_date: null,
    entries,
    error: null,
  });

  return {
    current: () => data,
    status: () => [
      ...bundled.disposable.map((l) => bundledStatus(l)),
      ...bundled.corroborating.map((l) => bundledStatus(l)),
      builtIn('email.disposable.agreed', bundled.agreedDisposable.length),
      ...Object.values(files).map(fileStatus),
      builtIn('email.disposable.mx_hosts', DISPOSABLE_MX_HOSTS.length),
      builtIn('email.relay', RELAY_DOMAINS.length),
      bundledStatus(bundled.freeProviders, freeList.size),
      { ...builtIn('email.public_suffix_list', 0), source: PUBLIC_SUFFIX_SOURCE, entries: null },
    ],
    refresh: () => watcher.check(),
    close: () => {
      closing.abort();
      watcher.close();
    },
  };
}

let matchers: ReturnType<typeof buildMatchers> | undefined;

/** The bundled sets never change while the process runs: built once, shared by every inspector. */
function bundledMatchers(bundled: ReturnType<typeof loadBundledLists>): ReturnType<typeof buildMatchers> {
  matchers ??= buildMatchers(bundled);
  return matchers;
}

function buildMatchers(bundled: ReturnType<typeof loadBundledLists>) {
  const bundledDisposable = DomainList.of(...bundled.disposable.map((l) => l.domains), bundled.agreedDisposable);
  return {
    bundledDisposable,
    relays: DomainList.of(RELAY_DOMAINS),
    freeList: DomainList.of(bundled.freeProviders.domains.filter((d) => bundledDisposable.match(d) === null)),
    mainstream: DomainList.of(bundled.majorFree.domains.filter((d) => bundledDisposable.match(d) === null)),
    builtInMxHosts: DomainList.of(DISPOSABLE_MX_HOSTS),
    majorHosts: DomainList.of(MAJOR_MAIL_HOSTS),
  };
}

/**
 * The temp-mail host list, except that a big provider's or gateway's mail host never counts as
 * one, whatever a file says: an operator's `google.com` (or one above it, `com`) in
 * disposable-mx-hosts.txt would otherwise call every Workspace domain throw-away.
 */
function neverMajor(hosts: DomainMatcher, majors: DomainMatcher): DomainMatcher {
  return {
    size: hosts.size,
    has: (host) => majors.match(host) === null && hosts.has(host),
    match: (host) => (majors.match(host) === null ? hosts.match(host) : null),
  };
}

const NO_DOMAINS = DomainList.of();

function dataFile(name: string, path: string): DataFile {
  return { name, path, list: null, modified: null, error: null };
}

function fileStatus(file: DataFile): SourceStatus {
  return {
    name: file.name,
    source: file.path,
    type: 'list',
    loaded: file.list !== null,
    build_date: file.modified,
    entries: file.list?.size ?? null,
    error: file.error,
  };
}

type FileRead = { list: DomainList | null; publicSuffixes: string[]; modified: string | null } | { error: string };

/**
 * Absent is fine (every DATA_DIR file is optional: looked for here, before a worker is started to
 * read it); unreadable, oversized or malformed is refused.
 */
async function readDataFile(path: string, signal: AbortSignal): Promise<FileRead> {
  const absent = { list: null, publicSuffixes: [], modified: null };
  try {
    await access(path);
    const read = await loadDomainListFile(path, signal);
    return 'error' in read ? read : { list: read.list, publicSuffixes: read.publicSuffixes, modified: read.modified.toISOString() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return absent;
    if (signal.aborted) throw error;
    return { error: `${path}: ${(error as Error).message}` };
  }
}
