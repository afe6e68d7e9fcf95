import type { Logger } from 'pino';
import type { SourceStatus } from '../evaluation/facts.js';
import { watchDirectory, type FileWatcher } from '../files/watch.js';
import { readRuleDirectory, RULE_FILE, type DirectoryResult } from './directory.js';
import { formatProblem, RuleSetError } from './rule-file.js';
import type { RuleSet } from './rule-set.js';

/**
 * One rules directory, kept current: the rule sets that serve, and why any change was refused.
 * A reload is judged file by file: a good change is taken, a broken file keeps its last good rule
 * set (or, if it is new, adds no event type) and its error shows in `status()` until fixed.
 */
export class RuleDirectory {
  private sets = new Map<string, RuleSet>();
  private errors = new Map<string, string>(); // event type (or '' for the directory) -> why refused
  private files = new Map<string, string>(); // event type -> file
  private watcher: FileWatcher | null = null;
  private fingerprint: string | null = null;
  private closed = false;
  /** Reads one after another, so a slow read never lands after a newer one. */
  private reading: Promise<void> = Promise.resolve();
  private firstRead: Promise<void> | null = null;
  /** Whether the first read has been applied; until then the directory serves nothing. */
  loaded = false;

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /** Loads `dir` now; any problem throws a RuleSetError (the start-up rule). */
  static async load(dir: string, logger: Logger): Promise<RuleDirectory> {
    const directory = new RuleDirectory(dir, logger.child({ rulesDir: dir }));
    const result = await readRuleDirectory(dir);
    if (result.error !== undefined) throw new Error(result.error);
    // No event type at all is a wrong path or an unmounted volume, not a choice.
    if (result.files.length === 0) throw new Error(`no rule files (<event_type>.yaml) in rules directory ${dir}`);
    const problems = result.files.flatMap((f) => f.problems ?? []);
    if (problems.length > 0) throw new RuleSetError(problems);
    directory.apply(result);
    directory.loaded = true;
    return directory;
  }

  /**
   * Starts loading `dir` and returns at once; `ready()` resolves when the first read is applied.
   * Problems are reported (log, status), never thrown: one account's broken files must not fail
   * its requests, let alone anyone else's.
   */
  static start(dir: string, logger: Logger): RuleDirectory {
    const directory = new RuleDirectory(dir, logger.child({ rulesDir: dir }));
    directory.firstRead = directory.reload().then(() => {
      directory.loaded = true;
    });
    return directory;
  }

  ready(): Promise<void> {
    return this.firstRead ?? Promise.resolve();
  }

  async watch(intervalMs: number): Promise<void> {
    const watcher = await watchDirectory(this.dir, (name) => RULE_FILE.test(name), () => this.reload(), intervalMs);
    // close() may have been called while the first signatures were being read.
    if (this.closed) return watcher.close();
    this.watcher = watcher;
    // The watcher's baseline was taken after our first read: a change in between would go unseen.
    await this.reload();
  }

  /** Checks for changes now (the interval does this on its own). */
  async check(): Promise<void> {
    await this.watcher?.check();
  }

  ruleSet(eventType: string): RuleSet | undefined {
    return this.sets.get(eventType);
  }

  eventTypes(): string[] {
    return [...this.sets.keys()];
  }

  /** Reads the directory again and takes what changed. Never rejects: a failure is reported in `status()`. */
  reload(): Promise<void> {
    this.reading = this.reading.then(async () => {
      if (this.closed) return;
      try {
        this.apply(await readRuleDirectory(this.dir));
      } catch (error) {
        this.refuseDirectory(`cannot reload rules directory ${this.dir}: ${(error as Error).message}`);
      }
    });
    return this.reading;
  }

  private refuseDirectory(message: string): void {
    this.errors.set('', message);
    this.logger.error({ err: message }, 'rules directory refused; the last good rule sets keep serving');
  }

  private apply(result: DirectoryResult): void {
    if (result.error !== undefined) return this.refuseDirectory(result.error);
    this.errors.delete('');
    if (result.fingerprint === this.fingerprint) return; // nothing changed since the last read
    this.fingerprint = result.fingerprint;
    const sets = new Map<string, RuleSet>();
    const errors = new Map<string, string>();
    const files = new Map<string, string>();
    for (const entry of result.files) {
      files.set(entry.eventType, entry.file);
      if (entry.ruleSet) {
        sets.set(entry.eventType, entry.ruleSet);
        continue;
      }
      const message = entry.problems.map(formatProblem).join('; ');
      errors.set(entry.eventType, message);
      const previous = this.sets.get(entry.eventType);
      if (previous) sets.set(entry.eventType, previous);
      this.logger.error(
        { file: entry.file, problems: entry.problems.map(formatProblem) },
        `rule file ${entry.file} refused; ${previous ? 'its last good rule set keeps serving' : 'its event type is not served'}`,
      );
    }
    const removed = [...this.sets.keys()].filter((eventType) => !files.has(eventType));
    this.sets = sets;
    this.errors = errors;
    this.files = files;
    this.logger.info({ eventTypes: [...sets.keys()], removed, refused: [...errors.keys()] }, 'rules loaded');
  }

  status(): SourceStatus[] {
    const entries: SourceStatus[] = [...this.files].map(([eventType, file]) => ({
      name: `rules.${eventType}`,
      source: file,
      type: 'rules',
      loaded: this.sets.has(eventType),
      build_date: null,
      entries: this.sets.get(eventType)?.rules.length ?? null,
      error: this.errors.get(eventType) ?? null,
    }));
    const dirError = this.errors.get('');
    if (dirError !== undefined) {
      entries.push({ name: 'rules', source: this.dir, type: 'rules', loaded: this.sets.size > 0, build_date: null, entries: this.sets.size, error: dirError });
    }
    return entries;
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
  }
}
