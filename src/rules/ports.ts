import type { EmailFacts } from '../email/facts.js';
import type { HistoryFacts } from '../history/facts.js';
import type { VelocityPlan } from '../history/velocity.js';
import type { IpFacts } from '../ip/facts.js';
import type { ListFacts } from '../lists/facts.js';
import type { Account, Resource } from '../core/ports.js';
import type { EvaluationRequest } from '../request/evaluation-request.js';

/** What rules read: the request and its enrichment. Field paths such as `email.domain` address it. */
export interface EvaluationContext {
  event_type: string;
  request: EvaluationRequest;
  email: EmailFacts;
  ip: IpFacts;
  user: EvaluationRequest['user'] | null;
  device_intelligence: EvaluationRequest['device_intelligence'] | null;
  /** What came before (this event counted); null when the store did not answer or history is off. */
  history: HistoryFacts | null;
  /** The account's list entries the request matched. */
  lists: ListFacts;
  /** Checks that could not run; a rule reading one of them does not fire. */
  unavailable: ReadonlySet<string>;
}

export type State = 'approve' | 'review' | 'decline';

export interface ScoreDetail {
  /** The rule's id (library id or custom `id`): what a backend branches on; the name is display text. */
  rule_id: string;
  rule_name: string;
  rule_type: 'static';
  score: number;
}

export interface RuleOutcome {
  details: ScoreDetail[];
  fraud_score: number;
  state: State;
  /** Rules in `dry_run` mode that would have fired: reported, not counted. */
  dry_run: ScoreDetail[];
  /** Every signal that was true, whether or not a rule fired on it. */
  signals: string[];
  /** Rules that could not be evaluated because an input was unknown (merged into the response's `unavailable`). */
  unavailable: string[];
  /** Ids of the rules in `details` and `dry_run`, in the same order (metrics count hits by id); absent when the rules could not run. */
  rule_ids?: string[];
  dry_run_ids?: string[];
  /** Ids of the rules that fired, live and dry-run, in the file's order (the log indexes them for search). */
  fired: string[];
  /** The stored version that decided (`rule_set_versions.id`), set by the rule book that served it. */
  rule_set_version?: number;
}

/**
 * What a shadow rule set decided (issue 16): kept with the log record, never answered or counted.
 * `details` and `dry_run` as in RuleOutcome, so a comparison counts each rule's hits and points.
 */
export interface ShadowOutcome {
  /** The shadow's version number (`rule_set_versions.version`). */
  version: number;
  fraud_score: number;
  state: State;
  /** Ids of the rules that fired, live and dry-run, in the file's order. */
  fired: string[];
  details: ScoreDetail[];
  dry_run: ScoreDetail[];
}

export interface RuleBook extends Resource {
  /** Event types the account can evaluate (its published rule sets). */
  eventTypes(account: Account): string[];
  /** Scores a context with the account's rule set for `context.event_type`; `undefined` when there is none. */
  evaluate(account: Account, context: EvaluationContext): RuleOutcome | undefined;
  /**
   * Scores the same context with the event type's shadow rule set; `undefined` when none runs. Must
   * not change `context`. Absent in rule books that keep no shadows.
   */
  shadow?(account: Account, context: EvaluationContext): ShadowOutcome | undefined;
  /**
   * The velocity counters an evaluation of this event type reads (its live file's) and counts (every
   * live file's that counts the type); null when there are none. Absent in rule books without counters.
   */
  velocity?(accountId: string, eventType: string): VelocityPlan | null;
}
