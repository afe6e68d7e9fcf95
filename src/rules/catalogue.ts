import { FIELDS, fieldAt, pathOf, type FieldPath, type FieldType, type RulePath } from './fields.js';
import { counterSchema, DEFAULT_THRESHOLDS, operatorsFor, VALUE_TYPE, type ConditionInput, type Mode, type Operator, type RuleFile } from './file-schema.js';
import { LIBRARY, libraryRule } from './library.js';
import type { Condition, RuleSet, Thresholds } from './rule-set.js';

/**
 * What a rule editor needs to know, read from the code that evaluates rules so it cannot drift:
 * every field a condition can read (its type, meaning, the check it depends on, the operators its
 * type accepts), the library, and a rule file's rules as they take effect (defaults filled in).
 */
export interface FieldInfo {
  path: RulePath;
  type: FieldType;
  /** The JSON type of the values it compares with. */
  value_type: 'string' | 'number' | 'boolean';
  description: string;
  operators: Operator[];
  /** The check in `unavailable` that makes it unknown when it could not run. */
  check: string | null;
}

export const fieldCatalogue = (): FieldInfo[] =>
  (Object.entries(FIELDS) as Array<[FieldPath, (typeof FIELDS)[FieldPath]]>).map(([path, field]) => ({
    path, type: field.type, value_type: VALUE_TYPE[field.type], description: field.description, operators: operatorsFor(field.type), check: field.check,
  }));

/** A file's velocity counters as fields (a file as written, maybe invalid: what is not a counter is left out). */
export function velocityCatalogue(file: { velocity?: unknown }): FieldInfo[] {
  if (!Array.isArray(file.velocity)) return [];
  const out: FieldInfo[] = [];
  for (const counter of file.velocity as unknown[]) {
    const parsed = counterSchema.safeParse(counter);
    if (!parsed.success) continue;
    const c = parsed.data;
    const counts = c.event_types === undefined ? 'its event type' : c.event_types.join(', ');
    out.push({
      path: `velocity.${c.name}`, type: 'number', value_type: 'number', operators: operatorsFor('number'), check: null,
      description: c.description ?? (c.states === undefined
        ? `Events of ${counts} per ${c.key} in the last ${c.window}, this one included; unknown without the key.`
        : `Events of ${counts} answered ${c.states.join(' or ')} per ${c.key} in the last ${c.window}, before this one (counted once decided); unknown without the key.`),
    });
  }
  return out;
}

export interface LibraryInfo {
  id: string;
  name: string;
  description: string;
  default_score: number;
  /** The fact it reads, and what makes it fire. */
  reads: RulePath;
  fires_when: boolean | 'present';
  /** The check whose failure makes it unknown. */
  check: string | null;
  /** The thresholds a rule file may set (`params:`), each with its default and bounds. */
  parameters: { name: string; description: string; default: number; min: number; max: number }[];
}

export const libraryCatalogue = (): LibraryInfo[] =>
  LIBRARY.map((rule) => ({ id: rule.id, name: rule.name, description: rule.description, default_score: rule.defaultScore, reads: rule.reads, fires_when: rule.when, check: fieldAt(rule.reads).check,
    parameters: Object.entries(rule.parameters ?? {}).map(([name, p]) => ({ name, description: p.description, default: p.default, min: p.min, max: p.max })),
  }));

/** One rule of a file as it takes effect. */
export interface RuleInfo {
  /** The library id or the custom id: how the API names the rule. */
  id: string;
  kind: 'library' | 'custom';
  name: string;
  description: string | null;
  score: number;
  /** The library's own score (null for a custom rule). */
  default_score: number | null;
  mode: Mode;
  /** The fields its condition reads. */
  reads: RulePath[];
  /** A custom rule's condition, as written. */
  when: ConditionInput | null;
}

export interface RuleSetInfo {
  thresholds: Thresholds;
  rules: RuleInfo[];
}

export function ruleSetInfo(file: RuleFile, compiled: RuleSet): RuleSetInfo {
  const rules = file.rules.map((input): RuleInfo => {
    const mode = input.mode ?? 'live';
    if (input.library !== undefined) {
      const library = libraryRule(input.library)!;
      const live = compiled.rules.find((r) => r.id === library.id);
      return {
        id: library.id, kind: 'library', name: library.name, description: library.description, score: input.score ?? library.defaultScore,
        default_score: library.defaultScore, mode, reads: live ? fieldsOf(live.when) : [library.reads], when: null,
      };
    }
    return { id: input.id!, kind: 'custom', name: input.name!, description: input.description ?? null, score: input.score!, default_score: null, mode, reads: inputFields(input.when!), when: input.when! };
  });
  return { thresholds: { ...DEFAULT_THRESHOLDS, ...file.thresholds }, rules };
}

function fieldsOf(condition: Condition, into: RulePath[] = []): RulePath[] {
  if (condition.kind === 'all' || condition.kind === 'any') for (const part of condition.of) fieldsOf(part, into);
  else if (condition.kind === 'not') fieldsOf(condition.of, into);
  else if (!into.includes(pathOf(condition.field))) into.push(pathOf(condition.field));
  return into;
}

function inputFields(condition: ConditionInput, into: RulePath[] = []): RulePath[] {
  for (const part of [...(condition.all ?? []), ...(condition.any ?? []), ...(condition.not ? [condition.not] : [])]) inputFields(part, into);
  if (condition.field !== undefined && !into.includes(condition.field)) into.push(condition.field);
  return into;
}
