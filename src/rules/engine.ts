import type { EvaluationContext, RuleOutcome, ScoreDetail, State } from './ports.js';
import type { IpKey } from '../ip/numeric.js';
import { addressKey } from './cidr.js';
import { ABSENT, UNKNOWN, pathOf, readField, type Field, type RulePath, type Reading, type Scalar } from './fields.js';
import type { Condition, Rule, RuleSet, Thresholds } from './rule-set.js';
import { MAX_REGEX_INPUT } from './pattern.js';

/**
 * The engine: a pure function from (enriched context, rule set) to outcome. No I/O, no clock.
 *
 * Conditions use three-valued logic. A leaf reading an UNKNOWN fact is unknown; `all` is false as
 * soon as one part is false, `any` true as soon as one is true, otherwise unknown wins; `not` keeps
 * unknown. A rule whose condition is unknown does not fire and is named `rule:<id>` in `unavailable`,
 * so "could not check" never reads as "clean". An ABSENT field (not sent) is a known answer: `exists`
 * says false and every other comparison is false.
 *
 * `explainRuleSet` is the same evaluation, run by the same code, that also notes what each rule
 * read: the evidence the admin API shows for a decision, and what a backtest replays.
 */

type Truth = boolean | typeof UNKNOWN;

/** One fact a rule read, as it read it. */
export interface Evidence {
  field: RulePath;
  /** The value found (null when the service did not know it; absent facts are null too). */
  value: Scalar | null;
  reading: 'value' | 'unknown' | 'absent';
  /** For an unknown reading caused by a check that could not run: its name (`ip.tor`). */
  unavailable: string | null;
  /**
   * What the rule compared it with, as the part that reads it holds (`≥ 5`, `= true`, `in [gmail.com, …]`);
   * null inside a `not` (where the part holds when the comparison fails) and for the parts not read.
   */
  condition: string | null;
}

export interface RuleExplanation {
  id: string;
  name: string;
  score: number;
  mode: Rule['mode'];
  /** `unknown`: an input was unknown, so the rule did not fire and is named `rule:<id>` in `unavailable`. */
  outcome: 'fired' | 'not_fired' | 'unknown';
  /** The facts it read, in the order it read them (`all` and `any` stop at the first part that decides). */
  evidence: Evidence[];
}

/** Per-evaluation memo: the address is parsed once, not once per CIDR rule. */
interface Scope {
  context: EvaluationContext;
  address?: IpKey | null;
  /** Set only when explaining: the reads of the rule being evaluated. */
  evidence: Evidence[] | null;
  /** Inside an odd number of `not`s (explaining only): a leaf's comparison is not what makes the rule fire. */
  negated?: boolean;
}

export function evaluateRuleSet(context: EvaluationContext, ruleSet: RuleSet): RuleOutcome {
  return run(context, ruleSet, null);
}

/** The outcome `evaluateRuleSet` gives, and for each rule (in the file's order) what it read and decided. */
export function explainRuleSet(context: EvaluationContext, ruleSet: RuleSet): { outcome: RuleOutcome; rules: RuleExplanation[] } {
  const rules: RuleExplanation[] = [];
  return { outcome: run(context, ruleSet, rules), rules };
}

function run(context: EvaluationContext, ruleSet: RuleSet, explained: RuleExplanation[] | null): RuleOutcome {
  const scope: Scope = { context, evidence: null };
  const details: ScoreDetail[] = [];
  const dryRun: ScoreDetail[] = [];
  const ruleIds: string[] = [];
  const dryRunIds: string[] = [];
  const unavailable: string[] = [];
  const fired: string[] = [];
  let sum = 0;
  for (const rule of ruleSet.rules) {
    if (explained !== null) scope.evidence = [];
    const truth = safely(rule.when, scope);
    if (explained !== null) {
      explained.push({ id: rule.id, name: rule.name, score: rule.score, mode: rule.mode, outcome: truth === UNKNOWN ? 'unknown' : truth ? 'fired' : 'not_fired', evidence: scope.evidence! });
      scope.evidence = null;
    }
    if (truth === UNKNOWN) unavailable.push(rule.unavailableAs);
    if (truth !== true) continue;
    fired.push(rule.id);
    const detail: ScoreDetail = { rule_id: rule.id, rule_name: rule.name, rule_type: 'static', score: rule.score };
    if (rule.mode === 'dry_run') {
      dryRun.push(detail);
      dryRunIds.push(rule.id);
    } else {
      details.push(detail);
      ruleIds.push(rule.id);
      sum += rule.score;
    }
  }
  const signals = ruleSet.signals.filter((signal) => safely(signal.when, scope) === true).map((signal) => signal.id);
  const fraudScore = Math.min(100, Math.max(0, sum));
  return {
    details, fraud_score: fraudScore, state: stateFor(fraudScore, ruleSet.thresholds), dry_run: dryRun, signals, unavailable,
    rule_ids: ruleIds, dry_run_ids: dryRunIds, fired,
  };
}

/** A field as the engine reads it; when explaining, the reading is noted too (once per field and rule). */
function read(field: Field, scope: Scope): Reading {
  const value = readField(field, scope.context);
  const evidence = scope.evidence;
  if (evidence !== null) {
    const path = pathOf(field);
    if (!evidence.some((e) => e.field === path)) {
      const raw = field.read(scope.context);
      const unavailable = field.check !== null && scope.context.unavailable.has(field.check) ? field.check : null;
      evidence.push({
        field: path,
        value: value === UNKNOWN || value === ABSENT ? (unavailable === null && raw !== undefined ? raw : null) : value,
        reading: value === UNKNOWN ? 'unknown' : value === ABSENT ? 'absent' : 'value',
        unavailable,
        condition: null,
      });
    }
  }
  return value;
}

/** Half-open bands: approve below `review`, review from `review`, decline from `decline` (PRODUCT.md "Scores and states"). */
export function stateFor(score: number, thresholds: Thresholds): State {
  if (score >= thresholds.decline) return 'decline';
  if (score >= thresholds.review) return 'review';
  return 'approve';
}

/**
 * A condition that throws is unknown, like one whose input is: one rule's failure degrades the
 * answer (`rule:<id>` in unavailable) and never fails the request. Facts of the wrong type are
 * already unknown (fields.ts); this is for whatever else a bug or a data file may bring.
 */
function safely(condition: Condition, scope: Scope): Truth {
  try {
    return test(condition, scope);
  } catch {
    return UNKNOWN;
  }
}

function test(condition: Condition, scope: Scope): Truth {
  switch (condition.kind) {
    case 'all': {
      let result: Truth = true;
      for (const part of condition.of) {
        const truth = test(part, scope);
        if (truth === false) return false;
        if (truth === UNKNOWN) result = UNKNOWN;
      }
      return result;
    }
    case 'any': {
      let result: Truth = false;
      for (const part of condition.of) {
        const truth = test(part, scope);
        if (truth === true) return true;
        if (truth === UNKNOWN) result = UNKNOWN;
      }
      return result;
    }
    case 'not': {
      if (scope.evidence !== null) scope.negated = !scope.negated;
      const truth = test(condition.of, scope);
      if (scope.evidence !== null) scope.negated = !scope.negated;
      return truth === UNKNOWN ? UNKNOWN : !truth;
    }
    case 'exists': {
      const value = read(condition.field, scope);
      if (scope.evidence !== null) noteCondition(condition, scope);
      if (value === UNKNOWN) return UNKNOWN;
      return (value !== ABSENT) === condition.value;
    }
    default: {
      const value = read(condition.field, scope);
      if (scope.evidence !== null) noteCondition(condition, scope);
      return compare(condition, value, scope);
    }
  }
}

type Leaf = Exclude<Condition, { kind: 'all' | 'any' | 'not' }>;
const OPS = { gt: '>', gte: '≥', lt: '<', lte: '≤' } as const;
const listed = (values: Iterable<unknown>) => {
  const all = [...values].map(String);
  return `[${all.slice(0, 3).join(', ')}${all.length > 3 ? `, … ${all.length - 3} more` : ''}]`;
};

/** A leaf's comparison as people read it (`≥ 5`), on the evidence of the field it read (the first comparison of that field wins). */
function noteCondition(condition: Leaf, scope: Scope): void {
  const path = pathOf(condition.field);
  const evidence = scope.evidence!.find((e) => e.field === path);
  if (evidence === undefined || evidence.condition !== null || scope.negated) return;
  evidence.condition = conditionText(condition);
}

export function conditionText(condition: Leaf): string {
  switch (condition.kind) {
    case 'equals': return `${condition.negate ? '≠' : '='} ${JSON.stringify(condition.value)}`;
    case 'in': return `${condition.negate ? 'not in' : 'in'} ${listed(condition.values)}`;
    case 'compare': return `${OPS[condition.op]} ${condition.value}`;
    case 'exists': return condition.value ? 'sent' : 'not sent';
    case 'ends_with': return `ends with ${listed(condition.suffixes)}`;
    case 'cidr': return 'in the rule\'s ranges';
    case 'matches': return `matches /${condition.pattern.source}/`;
  }
}

function compare(condition: Exclude<Condition, { kind: 'all' | 'any' | 'not' | 'exists' }>, value: Reading, scope: Scope): Truth {
  if (value === UNKNOWN) return UNKNOWN;
  if (value === ABSENT) return false;
  if (condition.field.atLeast !== null && condition.field.atLeast(scope.context)) return compareLowerBound(condition, value as number);
  switch (condition.kind) {
    case 'equals':
      return (value === condition.value) !== condition.negate;
    case 'in':
      return condition.values.has(value) !== condition.negate;
    case 'compare': {
      const n = value as number;
      if (condition.op === 'gt') return n > condition.value;
      if (condition.op === 'gte') return n >= condition.value;
      if (condition.op === 'lt') return n < condition.value;
      return n <= condition.value;
    }
    case 'ends_with':
      return condition.suffixes.some((suffix) => (value as string).endsWith(suffix));
    case 'cidr': {
      if (scope.address === undefined) scope.address = addressKey(value as string);
      // Not an address: the fact is garbage, so the answer is unknown rather than "outside".
      return scope.address === null ? UNKNOWN : condition.ranges.has(scope.address);
    }
    case 'matches': {
      const text = value as string;
      // Longer than any request field allows: not tested rather than risk a slow match.
      if (text.length > MAX_REGEX_INPUT) return UNKNOWN;
      return condition.pattern.test(text);
    }
  }
}

/**
 * A count known only to be at least `bound` (a distinct set past its cap: `history.at_least`): a
 * `gt`/`gte` it already meets is true whatever the rest; anything else would be a guess, so
 * unknown (`lt`/`lte`/`equals`/`in` included, even where the bound could rule them out).
 */
function compareLowerBound(condition: Exclude<Condition, { kind: 'all' | 'any' | 'not' | 'exists' }>, bound: number): Truth {
  if (condition.kind !== 'compare') return UNKNOWN;
  if (condition.op === 'gt') return bound > condition.value ? true : UNKNOWN;
  if (condition.op === 'gte') return bound >= condition.value ? true : UNKNOWN;
  return UNKNOWN;
}
