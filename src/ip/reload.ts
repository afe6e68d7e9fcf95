import { access } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { SourceStatus } from '../core/ports.js';

/** What a loader hands back: the data, checked, and its provenance. */
export interface Loaded<T> {
  value: T;
  /** E.g. `GeoLite2-City`, `list`. */
  type: string;
  buildDate: Date | null;
  entries: number;
  /** Lines or rows skipped as malformed. */
  malformed?: number;
  /** Rows cut or dropped because they overlapped an earlier one. */
  overlapping?: number;
}

/**
 * One data source that can be replaced while the service runs: validate, then swap. A candidate
 * that fails to load is refused with a log line naming the file and the last good copy keeps
 * serving; `status()` shows the refusal until a good copy arrives. A file that disappears is
 * unloaded: removing it is how an operator turns the source off.
 */
export class ReloadableSource<T> {
  private loaded: (Loaded<T> & { file: string }) | null = null;
  private error: string | null = null;
  /** Aborted by `close`: a load in progress is ended (a list's worker terminated), not waited for. */
  private readonly closing = new AbortController();

  /**
   * @param files candidate files, preferred first (e.g. GeoIP2-City.mmdb before GeoLite2-City.mmdb):
   *   the most preferred one present that passes its checks is loaded.
   */
  constructor(
    readonly name: string,
    readonly files: readonly string[],
    private readonly load: (file: string, signal: AbortSignal) => Promise<Loaded<T>>,
    private readonly logger: Logger,
    /**
     * The bundled package this source ships in (name and version), shown as its source. Bundled
     * data is not the operator's to fix: what its loader skipped is counted in the status, not
     * warned about on every start.
     */
    private readonly bundled?: string,
  ) {}

  get current(): T | null {
    return this.loaded?.value ?? null;
  }

  /**
   * Loads the preferred file present now. If it is refused, the last good copy of it keeps serving;
   * if it was not serving, the next candidate present is tried. Resolves whatever happens: errors
   * are reported (log, status), not thrown.
   */
  async reload(): Promise<void> {
    if (this.closing.signal.aborted) return;
    const present = await presentFiles(this.files);
    if (present.length === 0) {
      if (this.loaded !== null) this.logger.warn({ source: this.name, file: this.loaded.file }, 'ip data file removed: source unloaded');
      this.loaded = null;
      this.error = null;
      return;
    }
    const refusals: string[] = [];
    for (const file of present) {
      try {
        const candidate = await this.load(file, this.closing.signal);
        this.swapIn(file, candidate);
        this.error = refusals.length > 0 ? refusals.join('; ') : null;
        return;
      } catch (error) {
        if (this.closing.signal.aborted) return;
        refusals.push(`${file}: ${(error as Error).message}`);
        this.logger.error(
          { source: this.name, file, err: (error as Error).message, serving: this.loaded?.file ?? null },
          `ip data file refused: ${file}`,
        );
        // The last good copy of this very file beats a less preferred one.
        if (this.loaded?.file === file) break;
      }
    }
    this.error = refusals.join('; ');
  }

  private swapIn(file: string, candidate: Loaded<T>): void {
    this.loaded = { ...candidate, file };
    this.logger.info({ ...this.status(), file }, `ip data source loaded: ${this.name}`);
    if (candidate.malformed && this.bundled === undefined) {
      this.logger.warn({ source: this.name, file, malformed: candidate.malformed }, `ip data file has malformed lines: ${file}`);
    }
  }

  close(): void {
    this.closing.abort();
  }

  status(): SourceStatus {
    const l = this.loaded;
    return {
      name: this.name,
      source: l === null ? null : (this.bundled ?? l.file),
      type: l?.type ?? 'none',
      loaded: l !== null,
      build_date: l?.buildDate?.toISOString() ?? null,
      entries: l?.entries ?? null,
      error: this.error,
      ...(l?.malformed !== undefined ? { malformed: l.malformed } : {}),
      ...(l?.overlapping !== undefined ? { overlapping: l.overlapping } : {}),
    };
  }
}

async function presentFiles(files: readonly string[]): Promise<string[]> {
  const present: string[] = [];
  for (const file of files) {
    try {
      await access(file);
      present.push(file);
    } catch {
      // absent: not a candidate
    }
  }
  return present;
}
