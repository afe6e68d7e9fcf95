import { parseRuleFile, type RuleFileProblem } from './rule-file.js';
import type { RuleSet } from './rule-set.js';

/**
 * Stored rule set versions compiled for replay (a decision's evidence, a backtest), by their
 * store-wide id. Versions are never edited, so a compiled one stays right; the cache keeps the
 * most recently used `maxEntries` (default 64: a rule file is at most 32 KiB, its compiled form a
 * few times that, so at most a few MiB).
 */
export interface StoredVersion {
  id: number;
  account_id: string;
  event_type: string;
  version: number;
  yaml: string;
}

export type CompiledVersion = { version: StoredVersion; ruleSet: RuleSet } | { version: StoredVersion; problems: RuleFileProblem[] };

export class CompiledVersions {
  private readonly cache = new Map<number, CompiledVersion>();

  constructor(
    private readonly load: (id: number) => Promise<StoredVersion | undefined>,
    private readonly maxEntries = 64,
  ) {}

  /** The version compiled, its problems when it no longer validates, or undefined when there is no such version. */
  async get(id: number): Promise<CompiledVersion | undefined> {
    const cached = this.cache.get(id);
    if (cached !== undefined) {
      this.cache.delete(id);
      this.cache.set(id, cached);
      return cached;
    }
    const version = await this.load(id);
    if (version === undefined) return undefined;
    const parsed = parseRuleFile(version.event_type, `${version.account_id}/${version.event_type}.yaml (v${version.version})`, version.yaml);
    const compiled: CompiledVersion = 'ruleSet' in parsed ? { version, ruleSet: parsed.ruleSet } : { version, problems: parsed.problems };
    this.cache.set(id, compiled);
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    return compiled;
  }
}
