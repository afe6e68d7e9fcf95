import type { Kysely } from 'kysely';
import type { RuleOutcome, ShadowOutcome } from '../rules/ports.js';
import { loggedOutcome } from '../evaluation/replay.js';
import { timeOfId } from '../store/log-record.js';
import type { Database } from '../store/schema.js';
import { loggedPages, parsed, type BacktestScope, type LoggedRow } from './backtest.js';
import { ReportBuilder, STATES, type BacktestReport } from './report.js';

/**
 * Live against shadow (issue 16), over the logged evaluations of one account and event type in a
 * time range that carry a shadow outcome: the backtest's report (report.ts), the candidate being
 * the shadow as it decided at the time. Nothing is replayed: both outcomes are read from the log.
 * It runs on the request thread, so it is bounded: pages of PAGE_SIZE with a turn of the event
 * loop between them (live evaluations go first), and at most MAX_COMPARED evaluations a call,
 * after which the report says `truncated` and where it stopped (`until`: ask again from there).
 */
export const PAGE_SIZE = 250;
export const MAX_COMPARED = 100_000;

export interface ShadowComparison extends BacktestReport {
  /** The shadow versions the evaluations were scored by, and how many each. */
  shadow_versions: Array<{ version: number; evaluations: number }>;
  /** MAX_COMPARED reached before the range's end: `until` is then where it stopped (exclusive). */
  truncated: boolean;
}

export interface ComparisonOptions {
  pageSize?: number;
  maxCompared?: number;
}

export async function compareShadow(db: Kysely<Database>, scope: BacktestScope, options: ComparisonOptions = {}): Promise<ShadowComparison> {
  const maxCompared = options.maxCompared ?? MAX_COMPARED;
  const builder = new ReportBuilder(scope);
  const versions = new Map<number, number>();
  let seen = 0;
  let last = -1;
  let stoppedAt: number | null = null;
  pages: for await (const page of loggedPages(db, scope, options.pageSize ?? PAGE_SIZE, true)) {
    for (const row of page) {
      // Stopped on a millisecond's edge, so the range asked next (from `until`) repeats and skips nothing.
      const at = timeOfId(row.id);
      if (seen >= maxCompared && at > last) {
        stoppedAt = at;
        break pages;
      }
      seen += 1;
      last = at;
      const version = compare(builder, row);
      if (version !== null) versions.set(version, (versions.get(version) ?? 0) + 1);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const report = builder.finish();
  return {
    ...report,
    until: stoppedAt === null ? report.until : new Date(stoppedAt).toISOString(),
    shadow_versions: [...versions].sort((a, b) => a[0] - b[0]).map(([version, evaluations]) => ({ version, evaluations })),
    truncated: stoppedAt !== null,
  };
}

/** The shadow's version when compared; null when skipped (live's rule step had failed, or a row this version cannot read). */
function compare(builder: ReportBuilder, row: LoggedRow): number | null {
  let live;
  let shadow: ShadowOutcome;
  try {
    live = loggedOutcome({ id: row.id, request: null, response: parsed(row.response) });
    shadow = parsed(row.shadow) as ShadowOutcome;
    if (!isShadowOutcome(shadow)) throw new Error('not a shadow outcome');
  } catch {
    builder.skip('unreadable');
    return null;
  }
  if (live === null) {
    builder.skip('rules_failed');
    return null;
  }
  const candidate: RuleOutcome = { ...shadow, signals: [], unavailable: [] };
  builder.add(row.id, row.label, live, candidate);
  return shadow.version;
}

function isShadowOutcome(value: ShadowOutcome | null): value is ShadowOutcome {
  return typeof value === 'object' && value !== null && Number.isInteger(value.version) && typeof value.fraud_score === 'number' &&
    (STATES as readonly string[]).includes(value.state) && Array.isArray(value.details) && Array.isArray(value.dry_run);
}
