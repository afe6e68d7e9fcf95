import { typedNumber, type EffectiveRule, type LibraryRule, type Mode, type Version, type WrittenRule } from './types';

export type Parameter = LibraryRule['parameters'][number];

/** One rule's controls as typed: its score, its mode and (a library rule's) parameters. */
export interface RowValues {
  score: string;
  mode: Mode;
  params: Record<string, string>;
}

/** The thresholds as typed. */
export interface ThresholdValues {
  review: string;
  decline: string;
}

/**
 * What the analyst changed in the draft and has not saved yet: the rows that differ from the saved
 * text, by rule id, and the thresholds when they differ. Saved as one edit (`PATCH …/draft`).
 */
export interface DraftEdits {
  rules: Record<string, RowValues>;
  thresholds: ThresholdValues | null;
}

export const NO_EDITS: DraftEdits = { rules: {}, thresholds: null };

export const writtenId = (rule: WrittenRule) => rule.library ?? rule.id;

/** The row as saved: the file's values, a parameter the file does not set at its default. */
export function savedRow(rule: EffectiveRule, written: WrittenRule | undefined, parameters: Parameter[]): RowValues {
  return {
    score: String(rule.score),
    mode: rule.mode,
    params: Object.fromEntries(parameters.map((p) => [p.name, String(written?.params?.[p.name] ?? p.default)])),
  };
}

export const savedThresholds = (version: Version): ThresholdValues => ({
  review: String(version.thresholds?.review ?? ''),
  decline: String(version.thresholds?.decline ?? ''),
});

export const sameRow = (a: RowValues, b: RowValues) =>
  a.score === b.score && a.mode === b.mode && Object.keys(a.params).every((k) => a.params[k] === b.params[k]);

/** The changed rules of `edits` still in the draft (a rule removed meanwhile has nothing to save). */
export const changedIds = (edits: DraftEdits, draft: Version) => Object.keys(edits.rules).filter((id) => draft.rules.some((r) => r.id === id));

/** How many things are unsaved: each changed rule, and the thresholds. */
export const unsavedCount = (edits: DraftEdits, draft: Version) => changedIds(edits, draft).length + (edits.thresholds ? 1 : 0);

/** Out of bounds is said at once, in the API's words (the API refuses it too). */
export function parameterProblem(p: Parameter, text: string): string | undefined {
  const value = Number(text);
  return text.trim() === '' || !Number.isInteger(value) || value < p.min || value > p.max ? `${p.name} must be a whole number from ${p.min} to ${p.max}` : undefined;
}

/**
 * The rule as it will be written: the rule as written with the new values. What the file does not
 * say stays unsaid while it is the default, so the diff shows only what was edited, and a parameter
 * at its default is left out (a default stays a default if the library's changes).
 */
export function ruleToWrite(rule: EffectiveRule, written: WrittenRule, parameters: Parameter[], values: RowValues, saved: RowValues): WrittenRule {
  const next: WrittenRule = { ...written };
  if (written.score !== undefined || values.score !== String(rule.default_score ?? '')) next.score = typedNumber(values.score);
  if (written.mode !== undefined || values.mode !== 'live') next.mode = values.mode;
  if (parameters.some((p) => values.params[p.name] !== saved.params[p.name])) {
    const set = parameters.filter((p) => values.params[p.name] !== String(p.default)).map((p) => [p.name, typedNumber(values.params[p.name]!)] as const);
    if (set.length > 0) next.params = Object.fromEntries(set);
    else delete next.params;
  }
  return next;
}
