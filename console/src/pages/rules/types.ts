import type { Answered, Schemas } from '../../api/client';

/** The rule-set shapes the admin API answers, named for the rules pages. */
export type RuleSetDetail = Answered<'getRuleSet'>;
export type Version = NonNullable<RuleSetDetail['published']>;
export type VersionInfo = Answered<'listRuleSetVersions'>['versions'][number];
/** A rule as it takes effect (defaults filled in). */
export type EffectiveRule = Version['rules'][number];
/** A rule as written in the file (what the draft routes take). */
export type WrittenRule = Schemas['rule'];
export type Condition = Schemas['condition'];
export type LibraryRule = Answered<'getRuleLibrary'>['rules'][number];
export type RuleField = Answered<'getRuleFields'>['fields'][number];
export type Operator = RuleField['operators'][number];
export type Mode = EffectiveRule['mode'];
/** Hit rates of the live rules over one window (24 hours, 7 days). */
export type HitWindow = Answered<'getRuleHitRates'>['windows'][number];

export const MODES: { value: Mode; label: string }[] = [
  { value: 'live', label: 'live' },
  { value: 'dry_run', label: 'dry run' },
  { value: 'off', label: 'off' },
];

export const modeLabel = (mode: Mode) => MODES.find((m) => m.value === mode)?.label ?? mode;

/**
 * A number typed in an input. Empty is not 0: it goes as NaN (null in JSON), so the API's
 * message says a number is expected rather than a silent 0 being saved.
 */
export const typedNumber = (text: string) => (text.trim() === '' ? Number.NaN : Number(text));

/** The registration rules the spec names (§1.6): listed first in the library. */
export const SPEC_RULES = ['email_undeliverable', 'email_disposable', 'ip_proxy', 'ip_datacenter', 'ip_tor'];

/** The registration card first (spec §1.5), then the others by name. */
export const byCardOrder = (a: string, b: string) => (a === 'account_register' ? -1 : b === 'account_register' ? 1 : a.localeCompare(b));

export const OPERATOR_LABELS: Record<Operator, string> = {
  equals: 'equals',
  not_equals: 'does not equal',
  in: 'is one of',
  not_in: 'is none of',
  gt: 'is greater than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  exists: 'is present',
  ends_with: 'ends with',
  cidr: 'is in the range (CIDR)',
  matches: 'matches the regular expression',
};

/** A custom rule's condition as one line of text: `email.domain ends with ".test" and not (…)`. */
export function conditionText(condition: Condition): string {
  if (condition.all) return condition.all.map((c) => `(${conditionText(c)})`).join(' and ');
  if (condition.any) return condition.any.map((c) => `(${conditionText(c)})`).join(' or ');
  if (condition.not) return `not (${conditionText(condition.not)})`;
  const operator = (Object.keys(OPERATOR_LABELS) as Operator[]).find((o) => o in condition);
  if (!operator) return JSON.stringify(condition);
  if (operator === 'exists') return `${condition.field} ${condition.exists ? 'is present' : 'is absent'}`;
  return `${condition.field} ${OPERATOR_LABELS[operator]} ${valueText(condition[operator])}`;
}

/** Strings quoted as typed (a regular expression keeps its single backslashes), lists in brackets. */
const valueText = (value: unknown): string =>
  Array.isArray(value) ? `[${value.map(valueText).join(', ')}]` : typeof value === 'string' ? `"${value}"` : String(value);
