import { parseCidrRanges, type CidrRanges } from './cidr.js';
import { fieldAt, type Field, type Scalar } from './fields.js';
import { DEFAULT_THRESHOLDS, type ConditionInput, type Mode, type RuleFile } from './file-schema.js';
import { LIBRARY, libraryParams, libraryRule, type LibraryRule } from './library.js';
import { compilePattern, type Pattern } from './pattern.js';
import { velocityCounter, type VelocityCounter } from '../history/velocity.js';

/**
 * A rule file made ready to evaluate: library rules resolved, sets, CIDR ranges and regular
 * expressions built once at load so evaluation only compares. Still data: the engine interprets it.
 */

export type Condition =
  | { kind: 'all'; of: Condition[] }
  | { kind: 'any'; of: Condition[] }
  | { kind: 'not'; of: Condition }
  | { kind: 'equals'; field: Field; value: Scalar; negate: boolean }
  | { kind: 'in'; field: Field; values: ReadonlySet<Scalar>; negate: boolean }
  | { kind: 'compare'; field: Field; op: 'gt' | 'gte' | 'lt' | 'lte'; value: number }
  | { kind: 'exists'; field: Field; value: boolean }
  | { kind: 'ends_with'; field: Field; suffixes: string[] }
  | { kind: 'cidr'; field: Field; ranges: CidrRanges }
  | { kind: 'matches'; field: Field; pattern: Pattern };

export interface Rule {
  id: string;
  /** How the outcome names the rule when its input is unknown: `rule:<id>`. */
  unavailableAs: string;
  name: string;
  score: number;
  mode: Exclude<Mode, 'off'>;
  when: Condition;
}

export interface Thresholds {
  review: number;
  decline: number;
}

export interface RuleSet {
  eventType: string;
  /** The file it was loaded from, for status and logs. */
  source: string;
  thresholds: Thresholds;
  /** In the file's order; rules switched `off` are left out. */
  rules: Rule[];
  /** Every library check, evaluated for `signals` whether or not the file enables it. */
  signals: { id: string; when: Condition }[];
  /** Its velocity counters (and those of the library rules it enables), in the file's order. */
  velocity: VelocityCounter[];
}

/** Compiles a validated file. Cannot fail: everything it relies on was checked by the schema. */
export function compileRuleSet(eventType: string, source: string, file: RuleFile): RuleSet {
  const rules: Rule[] = [];
  for (const input of file.rules) {
    const mode = input.mode ?? 'live';
    if (mode === 'off') continue;
    if (input.library !== undefined) {
      const library = libraryRule(input.library)!;
      rules.push({ id: library.id, unavailableAs: `rule:${library.id}`, name: library.name, score: input.score ?? library.defaultScore, mode, when: libraryCondition(library, input.params) });
    } else {
      rules.push({ id: input.id!, unavailableAs: `rule:${input.id!}`, name: input.name!, score: input.score!, mode, when: compileCondition(input.when!) });
    }
  }
  const velocity = (file.velocity ?? []).map((input) => velocityCounter(input, eventType));
  for (const rule of rules) {
    const counter = libraryRule(rule.id)?.counter;
    if (counter !== undefined) velocity.push(velocityCounter(counter, eventType));
  }
  return {
    eventType,
    source,
    thresholds: { ...DEFAULT_THRESHOLDS, ...file.thresholds },
    rules,
    signals: LIBRARY_SIGNALS,
    velocity,
  };
}

function libraryCondition(rule: LibraryRule, params?: Readonly<Record<string, number>>): Condition {
  if (rule.condition) return compileCondition(rule.condition(libraryParams(rule, params)));
  const field = fieldAt(rule.reads);
  return rule.when === 'present' ? { kind: 'exists', field, value: true } : { kind: 'equals', field, value: rule.when, negate: false };
}

const LIBRARY_SIGNALS = LIBRARY.map((rule) => ({ id: rule.id, when: libraryCondition(rule) }));

export function compileCondition(input: ConditionInput): Condition {
  if (input.all) return { kind: 'all', of: input.all.map(compileCondition) };
  if (input.any) return { kind: 'any', of: input.any.map(compileCondition) };
  if (input.not) return { kind: 'not', of: compileCondition(input.not) };
  const field = fieldAt(input.field!);
  const list = (value: string | string[]) => (Array.isArray(value) ? value : [value]);
  if (input.equals !== undefined) return { kind: 'equals', field, value: input.equals, negate: false };
  if (input.not_equals !== undefined) return { kind: 'equals', field, value: input.not_equals, negate: true };
  if (input.in !== undefined) return { kind: 'in', field, values: new Set(input.in), negate: false };
  if (input.not_in !== undefined) return { kind: 'in', field, values: new Set(input.not_in), negate: true };
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = input[op];
    if (value !== undefined) return { kind: 'compare', field, op, value };
  }
  if (input.exists !== undefined) return { kind: 'exists', field, value: input.exists };
  if (input.ends_with !== undefined) return { kind: 'ends_with', field, suffixes: list(input.ends_with) };
  if (input.cidr !== undefined) return { kind: 'cidr', field, ranges: parseCidrRanges(list(input.cidr)) as CidrRanges };
  if (input.matches !== undefined) return { kind: 'matches', field, pattern: compilePattern(input.matches) as Pattern };
  throw new Error('unreachable: the schema requires one operator');
}
