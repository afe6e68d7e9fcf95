import { explainRuleSet, type RuleExplanation } from '../rules/engine.js';
import type { RuleSet } from '../rules/rule-set.js';
import type { HistoryFacts } from '../history/facts.js';
import { NO_LIST_MATCHES, type ListFacts } from '../lists/facts.js';
import type { EmailFacts } from '../email/facts.js';
import type { IpFacts } from '../ip/facts.js';
import type { EvaluationContext, RuleOutcome, ScoreDetail } from '../rules/ports.js';
import { validateEvaluationRequest } from '../request/evaluation-request.js';

/**
 * Replay: a logged evaluation scored again, from what the log kept and nothing else (PRODUCT.md
 * "Rules"; issue 16's backtest). The context is rebuilt exactly: the request as validated, the
 * facts as they were answered, and the checks that could not run, which are the logged
 * `unavailable` without its `rule:` entries (those name rules of the rule set that decided, not
 * missing facts). Nothing is enriched again: a changed data file or DNS answer since changes nothing.
 * Replayed through the version that decided, it gives the logged outcome exactly.
 */

/** One evaluation as the log keeps it (`request` and `response` parsed from their JSON). */
export interface LoggedEvaluation {
  id: string;
  request: unknown;
  response: unknown;
}

/** A detail as logged: answers logged before `rule_id` existed lack it. */
type LoggedDetail = Omit<ScoreDetail, 'rule_id'> & { rule_id?: string };

/** What the logged answer said the rules decided: what a replay through the same version must give again. */
export interface LoggedOutcome {
  details: LoggedDetail[];
  fraud_score: number;
  state: string;
  dry_run: LoggedDetail[];
  signals: string[];
  /** The `rule:` entries of `unavailable`: rules whose input was unknown. */
  unavailable: string[];
}

/** Parts of the logged answer a replay reads. */
interface LoggedResponse {
  score: { details: LoggedDetail[]; fraud_score: number; state: string };
  dry_run: LoggedDetail[];
  signals: string[];
  email: EmailFacts;
  ip: IpFacts;
  /** Absent in answers logged before behaviour history existed: then null (unknown), like a store that did not answer. */
  history?: HistoryFacts | null;
  lists?: ListFacts;
  unavailable: string[];
}

const RULE_PREFIX = 'rule:';
/** Named in `unavailable` when the rule step itself failed (evaluate.ts): the logged outcome is not the rule set's. */
const RULES_FAILED = 'rules';

export class ReplayError extends Error {
  override name = 'ReplayError';
}

function loggedResponse(logged: LoggedEvaluation): LoggedResponse {
  const response = logged.response as Partial<LoggedResponse> | null;
  if (typeof response !== 'object' || response === null || typeof response.email !== 'object' || typeof response.ip !== 'object' ||
    !Array.isArray(response.unavailable) || typeof response.score !== 'object') {
    throw new ReplayError(`evaluation ${logged.id}: the logged answer is not one this version can replay`);
  }
  return response as LoggedResponse;
}

/** The evaluation's context as it was: the request revalidated, the facts and unavailable checks as logged. */
export function replayContext(logged: LoggedEvaluation): EvaluationContext {
  const validated = validateEvaluationRequest(logged.request);
  if (!validated.ok) throw new ReplayError(`evaluation ${logged.id}: the logged request does not validate (${validated.errors.map((e) => e.path).join(', ')})`);
  const request = validated.value;
  const response = loggedResponse(logged);
  return {
    event_type: request.event_type,
    request,
    email: response.email,
    ip: response.ip,
    user: request.user ?? null,
    device_intelligence: request.device_intelligence ?? null,
    history: response.history ?? null,
    lists: response.lists ?? NO_LIST_MATCHES,
    unavailable: new Set(response.unavailable.filter((name) => !name.startsWith(RULE_PREFIX))),
  };
}

/** What the log says was decided; `null` when the rule step had failed (nothing a rule set decided). */
export function loggedOutcome(logged: LoggedEvaluation): LoggedOutcome | null {
  const response = loggedResponse(logged);
  if (response.unavailable.includes(RULES_FAILED)) return null;
  return {
    details: response.score.details,
    fraud_score: response.score.fraud_score,
    state: response.score.state,
    dry_run: response.dry_run,
    signals: response.signals,
    unavailable: response.unavailable.filter((name) => name.startsWith(RULE_PREFIX)),
  };
}

export interface Replay {
  outcome: RuleOutcome;
  /** Each rule of the rule set, in its order: fired, not, or unknown, and the facts it read. */
  rules: RuleExplanation[];
}

/** Scores the logged evaluation again with `ruleSet` (the version that decided, or another: a backtest). */
export function replay(logged: LoggedEvaluation, ruleSet: RuleSet): Replay {
  return explainRuleSet(replayContext(logged), ruleSet);
}

/** The parts of the two outcomes that differ (empty: the replay reproduced the log). */
export function outcomeDifferences(replayed: RuleOutcome, logged: LoggedOutcome): string[] {
  const differences: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const key of ['fraud_score', 'state', 'signals', 'unavailable'] as const) {
    if (!same(replayed[key], logged[key])) differences.push(key);
  }
  for (const key of ['details', 'dry_run'] as const) {
    if (!same(replayed[key].map((detail, i) => asLogged(detail, logged[key][i])), logged[key])) differences.push(key);
  }
  return differences;
}

/** The replayed detail in the logged one's shape: without `rule_id` where the log predates it. */
function asLogged(detail: ScoreDetail, logged: LoggedDetail | undefined): LoggedDetail {
  if (logged === undefined || 'rule_id' in logged) return detail;
  const { rule_id: _id, ...rest } = detail;
  return rest;
}
