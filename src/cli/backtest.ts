import { fail } from './common.js';
import type { RuleFileText } from '../rules/templates.js';
import type { Store } from '../store/index.js';
import { candidateRuleSet, runBacktest } from '../backtest/backtest.js';
import { formatReport } from '../backtest/format.js';
import { parseTimeOrAgo } from '../backtest/range.js';
import type { BacktestReport } from '../backtest/report.js';

/**
 * `npm run rules -- backtest DIR --account A --since 7d`: each rule file in DIR (or the one
 * `--event-type` names) replayed over the account's logged evaluations of its event type, reported
 * as tables (or JSON). For a rule repository's CI: the exit code is 1 when, for any event type,
 * the candidate would decline more legit-labelled evaluations than live did by more than
 * `--max-legit-decline-increase` (default 0).
 */
export const BACKTEST_OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  json: { type: 'boolean' },
  'max-legit-decline-increase': { type: 'string' },
} as const;

export const BACKTEST_USAGE = `  backtest DIR --since WHEN [--until WHEN] [--event-type TYPE] [--max-legit-decline-increase N] [--json]
                                      replays the logged evaluations of the range through DIR's rule files; exit 1
                                      when legit-labelled declines would rise by more than N (default 0).
                                      WHEN: 30m, 12h, 7d (ago) or an ISO-8601 date or date-time`;

export interface BacktestValues {
  since?: string;
  until?: string;
  json?: boolean;
  'event-type'?: string;
  'max-legit-decline-increase'?: string;
}

/** The arguments, checked before the store is opened: a mistake costs no connection. */
export function backtestArguments(values: BacktestValues, now: number): { since: number; until: number; maxIncrease: number } {
  const since = parseTimeOrAgo(values.since ?? fail('backtest needs --since (e.g. --since 7d)'), now);
  if (since === null) fail(`--since "${values.since}": give a time ago (30m, 12h, 7d) or an ISO-8601 date`);
  const until = values.until === undefined ? now : parseTimeOrAgo(values.until, now);
  if (until === null) fail(`--until "${values.until}": give a time ago (30m, 12h, 7d) or an ISO-8601 date`);
  if (until <= since) fail('--until must be after --since');
  const max = values['max-legit-decline-increase'] ?? '0';
  if (!/^\d{1,9}$/.test(max)) fail('--max-legit-decline-increase must be a whole number of evaluations (0 or more)');
  return { since, until, maxIncrease: Number(max) };
}

/** Which files of the directory to backtest: all, or the one of `eventType`. */
export function backtestFiles(files: RuleFileText[], dir: string, eventType: string | undefined): RuleFileText[] {
  if (eventType === undefined) return files;
  const file = files.find((f) => f.eventType === eventType);
  return file === undefined ? fail(`no rule file for event type "${eventType}" in ${dir} (${eventType}.yaml)`) : [file];
}

/** How many more legit-labelled evaluations the candidate declines than live did. */
export const legitDeclineIncrease = (report: BacktestReport): number =>
  report.labels.candidate.confusion.false_positive - report.labels.live.confusion.false_positive;

export async function backtestCommand(
  store: Store,
  { account, dir, files, since, until, maxIncrease, json }: { account: string; dir: string; files: RuleFileText[]; since: number; until: number; maxIncrease: number; json: boolean },
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  const reports: BacktestReport[] = [];
  for (const file of files) {
    const candidate = candidateRuleSet(file.eventType, `${dir}/${file.eventType}.yaml`, file.yaml);
    const report = await runBacktest(store.engine.db, { account, eventType: file.eventType, since, until }, candidate);
    reports.push(report);
    if (!json) {
      for (const line of formatReport(report)) out(line);
      out('');
    }
  }
  if (json) out(JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2));
  const over = reports.filter((r) => legitDeclineIncrease(r) > maxIncrease);
  for (const r of over) {
    err(`${r.event_type}: the candidate declines ${legitDeclineIncrease(r)} more legit-labelled evaluations than live (allowed: ${maxIncrease})`);
  }
  return over.length === 0 ? 0 : 1;
}
