import { performance } from 'node:perf_hooks';
import type { HistoryRecorder, HistoryStep } from '../history/recorder.js';
import type { VelocityPlan } from '../history/velocity.js';
import type { ListBook } from '../lists/list-book.js';
import type { EmailFacts } from '../email/facts.js';
import type { Report } from '../core/ports.js';
import { evaluationId } from './id.js';
import { isoTime } from '../core/iso-time.js';
import type { Account } from '../core/ports.js';
import type { EmailInspector } from '../email/facts.js';
import type { EvaluationContext, RuleBook, RuleOutcome, ShadowOutcome } from '../rules/ports.js';
import type { IpInspector } from '../ip/facts.js';
import type { EvaluationRequest } from '../request/evaluation-request.js';
import type { EvaluationResponse } from './response.js';
import { unknownEmail, unknownIp } from './unknown.js';

const EMAIL_CHECKS = ['email.mx', 'email.disposable', 'email.free_provider', 'email.relay'];
const IP_CHECKS = ['ip.geo', 'ip.asn', 'ip.tor', 'ip.proxy', 'ip.datacenter', 'ip.vpn'];
/** When the rule step throws: nothing fired, and the answer says the rules could not run. */
const rulesFailed = (): RuleOutcome => ({ details: [], fraud_score: 0, state: 'approve', dry_run: [], signals: [], unavailable: ['rules'], fired: [] });
/** How long past the deadline a step that ignores its abort signal is waited for. */
const OVERRUN_GRACE_MS = 50;

export interface EvaluatorDependencies {
  email: EmailInspector;
  ip: IpInspector;
  rules: RuleBook;
  /** Whether the store answers (a field read, no I/O): when it does not, `store` is reported unavailable. */
  store: { readonly available: boolean };
  /** The history step (one read-and-record per evaluation); null when history is off (HISTORY_DAYS=0). */
  history: HistoryRecorder | null;
  /** The velocity counters an evaluation reads and counts in the history step (the rule book's); none when absent. */
  velocity?: (accountId: string, eventType: string) => VelocityPlan | null;
  lists: Pick<ListBook, 'check'>;
  /** The clock of evaluations (tests inject one to move through history's time windows). */
  now?: () => number;
  /** One deadline for all enrichment; what is not known by then is reported unavailable. */
  deadlineMs: number;
  /** Reports a step that threw, which is a bug: the answer degrades, the request does not fail. */
  onStepError: (step: string, error: unknown) => void;
}

/** `shadow`: what the event type's shadow rule set decided on the same context, for the log only; null when none ran. */
export type Evaluation = { response: EvaluationResponse; outcome: RuleOutcome; shadow: ShadowOutcome | null };

/** Named in `unavailable` while the store does not answer: this evaluation is not remembered. */
export const STORE_CHECK = 'store';

/**
 * The request and its enrichment (e-mail and IP concurrently, under one deadline; the account's
 * lists; its behaviour history, read and recorded in one step), as rules read it: what an
 * evaluation scores, and what the admin API's dry run scores with a draft. With `record: false`
 * nothing is recorded and the history is not read (`history` null, so behaviour rules are
 * unknown). Never rejects: a step that fails or overruns is reported in `unavailable`.
 */
export function createEnricher(deps: Omit<EvaluatorDependencies, 'rules'>) {
  /** From the caches at once when it can be (no deadline to arm), else with the network under the deadline. */
  function inspectEmail(request: EvaluationRequest): Report<EmailFacts> | Promise<Report<EmailFacts>> {
    try {
      return deps.email.inspectCached(request.parsedEmail) ?? inspectEmailLive(request);
    } catch (error) {
      deps.onStepError('email', error);
      return unknownEmail(request.parsedEmail, EMAIL_CHECKS);
    }
  }

  async function inspectEmailLive(request: EvaluationRequest): Promise<Report<EmailFacts>> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    // The inspector honours the signal and answers with what it knows (lists need no DNS). The race
    // is the guarantee that a step that does not can never stall the answer: a little later, it is dropped.
    const deadline = new Promise<Report<EmailFacts>>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        timer = setTimeout(() => resolve(unknownEmail(request.parsedEmail, EMAIL_CHECKS)), OVERRUN_GRACE_MS);
      }, deps.deadlineMs);
    });
    try {
      return await Promise.race([deps.email.inspect(request.parsedEmail, controller.signal), deadline]);
    } catch (error) {
      deps.onStepError('email', error);
      return unknownEmail(request.parsedEmail, EMAIL_CHECKS);
    } finally {
      clearTimeout(timer);
    }
  }

  async function enrich(request: EvaluationRequest, account: string, evaluatedAt: number, record = true): Promise<EvaluationContext> {
    return (await enrichAndRecord(request, account, evaluatedAt, record)).context;
  }
  // Called as before (the dry run, the backtest); the evaluator also takes `andRecord`.
  return Object.assign(enrich, { andRecord: enrichAndRecord });

  /** The context, and what to call once the rules decided (the history step's post-decision counts). */
  async function enrichAndRecord(request: EvaluationRequest, account: string, evaluatedAt: number, record = true): Promise<{ context: EvaluationContext; decided: HistoryStep['decided'] }> {
    const emailPromise = inspectEmail(request);
    let ipReport;
    try {
      ipReport = deps.ip.inspect(request.parsedIp);
    } catch (error) {
      deps.onStepError('ip', error);
      ipReport = unknownIp(request.parsedIp, IP_CHECKS);
    }
    // Started before the e-mail step is awaited: the store's round trip overlaps the DNS look-up.
    const historyPromise = !record || deps.history === null ? null : deps.history(account, request, ipReport.facts, evaluatedAt, deps.velocity?.(account, request.event_type));
    const lists = deps.lists.check(account, request, evaluatedAt);
    const emailReport = emailPromise instanceof Promise ? await emailPromise : emailPromise;
    const history: HistoryStep | null = historyPromise instanceof Promise ? await historyPromise : historyPromise;

    const unavailable = new Set(emailReport.unavailable);
    for (const name of ipReport.unavailable) unavailable.add(name);
    // A partial history (this replica's own counts: the store did not answer) is not the store's.
    if (!deps.store.available || (history !== null && history.facts.partial)) unavailable.add(STORE_CHECK);
    const context = {
      event_type: request.event_type,
      request,
      email: emailReport.facts,
      ip: ipReport.facts,
      user: request.user ?? null,
      device_intelligence: request.device_intelligence ?? null,
      history: history?.facts ?? null,
      lists,
      unavailable,
    };
    return { context, decided: history?.decided };
  }
}

export type Enricher = ReturnType<typeof createEnricher>;

/**
 * Enriches the request, then scores it with the account's rule set. Returns `undefined` when the
 * account has no rule set for the event type.
 */
export function createEvaluator(deps: EvaluatorDependencies) {
  const now = deps.now ?? Date.now;
  const enrich = createEnricher(deps.velocity !== undefined || deps.rules.velocity === undefined ? deps : { ...deps, velocity: (a, e) => deps.rules.velocity!(a, e) }).andRecord;

  return async function evaluate(request: EvaluationRequest, account: Account): Promise<Evaluation | undefined> {
    const started = performance.now();
    const evaluatedAt = now();
    const { context, decided } = await enrich(request, account.id, evaluatedAt);
    let outcome: RuleOutcome | undefined;
    try {
      outcome = deps.rules.evaluate(account, context);
    } catch (error) {
      // The engine contains each rule's failure itself; this is the last line, for a bug around it.
      deps.onStepError('rules', error);
      outcome = rulesFailed();
    }
    if (!outcome) return undefined;
    // Counters filtered on the answer's state count this event now that it has one.
    decided?.(outcome.state);
    // Beside the live set, on the same context (before its `unavailable` takes the live rules' names).
    const shadow = deps.rules.shadow === undefined ? null : shadowOf(account, context);
    // The context's own set: nothing reads it after the rules.
    const unavailable = context.unavailable as Set<string>;
    for (const name of outcome.unavailable) unavailable.add(name);

    const response: EvaluationResponse = {
      id: evaluationId(evaluatedAt),
      event_type: request.event_type,
      score: { details: outcome.details, fraud_score: outcome.fraud_score, state: outcome.state },
      dry_run: outcome.dry_run,
      signals: outcome.signals,
      email: context.email,
      ip: context.ip,
      history: context.history,
      lists: context.lists,
      unavailable: Array.from(unavailable),
      evaluated_at: isoTime(evaluatedAt),
      took_ms: Math.round((performance.now() - started) * 1000) / 1000,
    };
    return { response, outcome, shadow };
  };

  /** A shadow that throws is a bug of its own: reported, and this evaluation logs no shadow outcome; the live answer is untouched. */
  function shadowOf(account: Account, context: EvaluationContext): ShadowOutcome | null {
    try {
      return deps.rules.shadow!(account, context) ?? null;
    } catch (error) {
      deps.onStepError('shadow', error);
      return null;
    }
  }
}

export type Evaluator = ReturnType<typeof createEvaluator>;
