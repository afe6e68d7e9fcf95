import { createTwoFilesPatch } from 'diff';
import type { RuleInfo, RuleSetInfo } from './catalogue.js';
import type { Thresholds } from './rule-set.js';

/**
 * What changed between two versions of a rule set: structured (rules added, removed and changed
 * by id, each change a property with its two values; thresholds) for the console to show, and a
 * unified diff of the YAML texts (jsdiff) for people who read files. Both texts are rule files, at
 * most 32 KiB each, so the diff is bounded.
 */
export interface RuleChange {
  id: string;
  changes: Array<{ property: string; from: unknown; to: unknown }>;
}

export interface RuleSetDiff {
  thresholds: { from: Thresholds; to: Thresholds } | null;
  rules: {
    added: RuleInfo[];
    removed: RuleInfo[];
    changed: RuleChange[];
    /** The rules both versions have are in another order (rules are evaluated and reported in order). */
    reordered: boolean;
  };
  /** Unified diff of the YAML texts; empty when they are the same. */
  text: string;
}

export interface DiffSide {
  label: string;
  yaml: string;
  info: RuleSetInfo;
}

const COMPARED: Array<keyof RuleInfo> = ['name', 'description', 'score', 'mode', 'when'];
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function diffRuleSets(from: DiffSide, to: DiffSide): RuleSetDiff {
  const before = new Map(from.info.rules.map((r) => [r.id, r]));
  const after = new Map(to.info.rules.map((r) => [r.id, r]));
  const changed: RuleChange[] = [];
  for (const rule of to.info.rules) {
    const old = before.get(rule.id);
    if (old === undefined) continue;
    const changes = COMPARED.filter((p) => !same(old[p], rule[p])).map((property) => ({ property, from: old[property], to: rule[property] }));
    if (changes.length > 0) changed.push({ id: rule.id, changes });
  }
  const common = (rules: RuleInfo[], other: Map<string, RuleInfo>) => rules.filter((r) => other.has(r.id)).map((r) => r.id);
  const text = from.yaml === to.yaml ? '' : createTwoFilesPatch(from.label, to.label, from.yaml, to.yaml, undefined, undefined, { context: 3 });
  return {
    thresholds: same(from.info.thresholds, to.info.thresholds) ? null : { from: from.info.thresholds, to: to.info.thresholds },
    rules: {
      added: to.info.rules.filter((r) => !before.has(r.id)),
      removed: from.info.rules.filter((r) => !after.has(r.id)),
      changed,
      reordered: !same(common(from.info.rules, after), common(to.info.rules, before)),
    },
    text,
  };
}
