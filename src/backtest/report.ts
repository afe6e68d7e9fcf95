import type { RuleOutcome, ScoreDetail, State } from '../rules/ports.js';
import type { LoggedOutcome } from '../evaluation/replay.js';
import { timeOfId } from '../store/log-record.js';
import type { Label } from '../store/schema.js';

/**
 * A backtest's report (issue 16): what the candidate rule set would have decided on the logged
 * evaluations, beside what live decided (the logged answer). Built one evaluation at a time by
 * `ReportBuilder`; its size does not grow with the evaluations counted (the sample of changed
 * decisions is capped at SAMPLE_SIZE, the rule table at the rules the two sets name).
 */
export const STATES = ['approve', 'review', 'decline'] as const satisfies readonly State[];
export const SAMPLE_SIZE = 100;

/** Why an evaluation was not replayed. */
export type SkipReason = 'rules_failed' | 'request_invalid' | 'unreadable';

export interface RuleHits {
  /** Evaluations the rule fired on (live or dry-run). */
  hits: number;
  /** Of those, where it ran in dry-run mode (reported, not counted). */
  dry_run_hits: number;
  /** The points it added to fraud scores, summed (before the 0..100 clamp). */
  score: number;
}

export interface RuleRow {
  /** The rule's name: what the logged answer names it by. */
  rule_name: string;
  live: RuleHits;
  candidate: RuleHits;
}

/** Decline as the prediction of fraud, over the labelled evaluations. */
export interface LabelStats {
  /** Labelled evaluations per state. */
  by_state: Record<State, { fraud: number; legit: number }>;
  /** Declined and fraud, declined and legit, not declined and fraud, not declined and legit. */
  confusion: { true_positive: number; false_positive: number; false_negative: number; true_negative: number };
  /** Of the declined labelled evaluations, the share labelled fraud; null when none was declined. */
  precision: number | null;
  /** Of the fraud-labelled evaluations, the share declined; null when none is labelled fraud. */
  recall: number | null;
}

export interface ChangedDecision {
  id: string;
  evaluated_at: string;
  label: Label | null;
  live: { state: State; fraud_score: number };
  candidate: { state: State; fraud_score: number };
  /** Names of the rules that fired with the candidate and not live, and the reverse. */
  rules_added: string[];
  rules_removed: string[];
}

export interface BacktestReport {
  account: string;
  event_type: string;
  since: string;
  until: string;
  /** Evaluations of the account and event type logged in the range. */
  evaluations: number;
  replayed: number;
  skipped: { total: number; reasons: Record<SkipReason, number> };
  /** Replayed evaluations whose state differs, and whose score differs. */
  changed: { state: number; score: number };
  /** `transitions[live][candidate]`: how many evaluations went from the live state to the candidate's. */
  transitions: Record<State, Record<State, number>>;
  rules: RuleRow[];
  /** Up to SAMPLE_SIZE changed decisions, oldest first. */
  sample: ChangedDecision[];
  labels: { labelled: number; live: LabelStats; candidate: LabelStats };
}

const zeroStates = <T>(make: () => T): Record<State, T> => ({ approve: make(), review: make(), decline: make() });
const noHits = (): RuleHits => ({ hits: 0, dry_run_hits: 0, score: 0 });

function emptyLabelStats(): LabelStats {
  return {
    by_state: zeroStates(() => ({ fraud: 0, legit: 0 })),
    confusion: { true_positive: 0, false_positive: 0, false_negative: 0, true_negative: 0 },
    precision: null,
    recall: null,
  };
}

function countLabel(stats: LabelStats, state: State, label: Label): void {
  stats.by_state[state][label] += 1;
  const declined = state === 'decline';
  const c = stats.confusion;
  if (label === 'fraud') {
    if (declined) c.true_positive += 1;
    else c.false_negative += 1;
  } else if (declined) c.false_positive += 1;
  else c.true_negative += 1;
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}

const isState = (value: string): value is State => (STATES as readonly string[]).includes(value);

export class ReportBuilder {
  private readonly report: BacktestReport;
  private readonly rules = new Map<string, RuleRow>();

  constructor(scope: { account: string; eventType: string; since: number; until: number }, private readonly sampleSize = SAMPLE_SIZE) {
    this.report = {
      account: scope.account,
      event_type: scope.eventType,
      since: new Date(scope.since).toISOString(),
      until: new Date(scope.until).toISOString(),
      evaluations: 0,
      replayed: 0,
      skipped: { total: 0, reasons: { rules_failed: 0, request_invalid: 0, unreadable: 0 } },
      changed: { state: 0, score: 0 },
      transitions: zeroStates(() => zeroStates(() => 0)),
      rules: [],
      sample: [],
      labels: { labelled: 0, live: emptyLabelStats(), candidate: emptyLabelStats() },
    };
  }

  /** Declares the candidate's rules, so a rule that never fires still has its row. */
  declareRules(names: readonly string[]): void {
    for (const name of names) this.row(name);
  }

  skip(reason: SkipReason): void {
    this.report.evaluations += 1;
    this.report.skipped.total += 1;
    this.report.skipped.reasons[reason] += 1;
  }

  add(id: string, label: Label | null, live: LoggedOutcome, candidate: RuleOutcome): void {
    // A logged state this version does not know is an answer it cannot compare: skipped as unreadable.
    if (!isState(live.state)) {
      this.skip('unreadable');
      return;
    }
    const r = this.report;
    r.evaluations += 1;
    r.replayed += 1;
    r.transitions[live.state][candidate.state] += 1;
    this.countRules(live.details, live.dry_run, 'live');
    this.countRules(candidate.details, candidate.dry_run, 'candidate');
    if (label !== null) {
      r.labels.labelled += 1;
      countLabel(r.labels.live, live.state, label);
      countLabel(r.labels.candidate, candidate.state, label);
    }
    if (live.fraud_score !== candidate.fraud_score) r.changed.score += 1;
    if (live.state === candidate.state) return;
    r.changed.state += 1;
    if (r.sample.length >= this.sampleSize) return;
    const liveNames = new Set([...live.details, ...live.dry_run].map((d) => d.rule_name));
    const candidateNames = new Set([...candidate.details, ...candidate.dry_run].map((d) => d.rule_name));
    r.sample.push({
      id,
      evaluated_at: new Date(timeOfId(id)).toISOString(),
      label,
      live: { state: live.state, fraud_score: live.fraud_score },
      candidate: { state: candidate.state, fraud_score: candidate.fraud_score },
      rules_added: [...candidateNames].filter((name) => !liveNames.has(name)),
      rules_removed: [...liveNames].filter((name) => !candidateNames.has(name)),
    });
  }

  /** Progress so far, without the tables. */
  counts(): { evaluations: number; replayed: number; skipped: number } {
    return { evaluations: this.report.evaluations, replayed: this.report.replayed, skipped: this.report.skipped.total };
  }

  finish(): BacktestReport {
    const { live, candidate } = this.report.labels;
    for (const stats of [live, candidate]) {
      const c = stats.confusion;
      stats.precision = ratio(c.true_positive, c.true_positive + c.false_positive);
      stats.recall = ratio(c.true_positive, c.true_positive + c.false_negative);
    }
    return { ...this.report, rules: [...this.rules.values()] };
  }

  private row(name: string): RuleRow {
    let row = this.rules.get(name);
    if (row === undefined) {
      row = { rule_name: name, live: noHits(), candidate: noHits() };
      this.rules.set(name, row);
    }
    return row;
  }

  private countRules(details: readonly Pick<ScoreDetail, 'rule_name' | 'score'>[], dryRun: readonly Pick<ScoreDetail, 'rule_name'>[], side: 'live' | 'candidate'): void {
    for (const detail of details) {
      const hits = this.row(detail.rule_name)[side];
      hits.hits += 1;
      hits.score += detail.score;
    }
    for (const detail of dryRun) {
      const hits = this.row(detail.rule_name)[side];
      hits.hits += 1;
      hits.dry_run_hits += 1;
    }
  }
}
