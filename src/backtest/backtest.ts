import type { Kysely } from 'kysely';
import { loggedOutcome, replayContext, type LoggedEvaluation } from '../evaluation/replay.js';
import { evaluateRuleSet } from '../rules/engine.js';
import { parseRuleFile, RuleSetError } from '../rules/rule-file.js';
import type { RuleSet } from '../rules/rule-set.js';
import { firstIdAt } from '../store/log-record.js';
import type { Database, Label } from '../store/schema.js';
import { ReportBuilder, type BacktestReport } from './report.js';

/**
 * A backtest (issue 16): every logged evaluation of one account and event type in a time range,
 * replayed through a candidate rule set from the log alone (src/evaluation/replay.ts: the facts,
 * history and lists as they were answered, never enriched again), beside what live decided (the
 * logged answer). Read a page at a time in id order (ids sort by time), so memory holds one page
 * and the report, whatever the range holds.
 */
export interface BacktestScope {
  account: string;
  eventType: string;
  /** Milliseconds since the epoch: from `since` (included) to `until` (excluded). */
  since: number;
  until: number;
}

export interface BacktestProgress {
  evaluations: number;
  replayed: number;
  skipped: number;
}

export interface BacktestOptions {
  /** Evaluations read per query. */
  pageSize?: number;
  /** After each page. (Cancel is the worker's: it is terminated, see worker.ts.) */
  onProgress?: (progress: BacktestProgress) => void;
  /**
   * The share of the time the replay works (0 < share <= 1): after each page it pauses so that it
   * works at most this share of the wall-clock time. Below 1 it leaves the cores, and V8's
   * garbage-collector threads the whole process shares, to the live evaluations (BACKTEST_CPU_PERCENT).
   */
  dutyCycle?: number;
  /** How a pause is waited (a timer; tests watch it). */
  pause?: (ms: number) => Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const PAGE_SIZE = 1_000;

/** The candidate from a rule file's text, validated as every rule file is; a RuleSetError naming each problem otherwise. */
export function candidateRuleSet(eventType: string, file: string, yaml: string): RuleSet {
  const parsed = parseRuleFile(eventType, file, yaml);
  if ('problems' in parsed) throw new RuleSetError(parsed.problems);
  return parsed.ruleSet;
}

export async function runBacktest(db: Kysely<Database>, scope: BacktestScope, candidate: RuleSet, options: BacktestOptions = {}): Promise<BacktestReport> {
  const builder = new ReportBuilder(scope);
  builder.declareRules(candidate.rules.map((rule) => rule.name));
  const duty = Math.min(1, Math.max(0.01, options.dutyCycle ?? 1));
  let started = performance.now();
  for await (const page of loggedPages(db, scope, options.pageSize ?? PAGE_SIZE)) {
    for (const row of page) score(builder, row, candidate);
    options.onProgress?.(builder.counts());
    if (duty < 1) {
      const worked = performance.now() - started;
      await (options.pause ?? sleep)((worked * (1 - duty)) / duty);
      started = performance.now();
    }
  }
  return builder.finish();
}

export interface LoggedRow {
  id: string;
  request: unknown;
  response: unknown;
  label: Label | null;
  /** The shadow outcome (JSON; parsed on PostgreSQL), read only when `withShadow` is asked. */
  shadow?: unknown;
}

function score(builder: ReportBuilder, row: LoggedRow, candidate: RuleSet): void {
  let logged: LoggedEvaluation;
  let live;
  try {
    // SQLite gives the documents as text; PostgreSQL's json columns come back parsed.
    logged = { id: row.id, request: parsed(row.request), response: parsed(row.response) };
    live = loggedOutcome(logged);
  } catch {
    builder.skip('unreadable');
    return;
  }
  if (live === null) {
    builder.skip('rules_failed');
    return;
  }
  let context;
  try {
    context = replayContext(logged);
  } catch {
    // The response was readable (above): what replay refuses is the request, which no longer validates.
    builder.skip('request_invalid');
    return;
  }
  // The plain engine, not the explaining one: a backtest counts outcomes and needs no evidence.
  builder.add(row.id, row.label, live, evaluateRuleSet(context, candidate));
}

export const parsed = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

/**
 * The account's evaluations of the event type in the range, with their labels, a page at a time in
 * id order. `withShadow`: only those that carry a shadow outcome, with it.
 */
export async function* loggedPages(db: Kysely<Database>, scope: BacktestScope, pageSize: number, withShadow = false): AsyncGenerator<LoggedRow[]> {
  const end = firstIdAt(scope.until);
  let after: string | null = null;
  for (;;) {
    let query = db.selectFrom('evaluations as e')
      .leftJoin('labels as l', (join) => join.onRef('l.account_id', '=', 'e.account_id').onRef('l.evaluation_id', '=', 'e.id'))
      .select(['e.id', 'e.request', 'e.response', 'l.label'])
      .where('e.account_id', '=', scope.account)
      .where('e.event_type', '=', scope.eventType)
      .where('e.id', '<', end)
      .orderBy('e.id')
      .limit(pageSize);
    if (withShadow) query = query.select('e.shadow').where('e.shadow', 'is not', null);
    query = after === null ? query.where('e.id', '>=', firstIdAt(scope.since)) : query.where('e.id', '>', after);
    const page = await query.execute();
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    after = page.at(-1)!.id;
  }
}
