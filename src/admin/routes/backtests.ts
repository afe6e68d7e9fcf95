import { z } from 'zod';
import { adminRoute } from '../route.js';
import { accountParams, iso, isoOrNull, time } from '../schemas.js';
import { FILE_CAPS } from '../../files/caps.js';
import { problems } from '../../http/problem.js';
import { EVENT_TYPE } from '../../rules/directory.js';
import { parseRuleFile } from '../../rules/rule-file.js';
import { BacktestConflict } from '../../backtest/jobs.js';
import type { BacktestRecord, BacktestSummary } from '../../backtest/records.js';
import { parseTimeOrAgo } from '../../backtest/range.js';
import { SAMPLE_SIZE, STATES } from '../../backtest/report.js';

/**
 * Backtests through the admin API (issue 16): start one with a rule file (its text, or a stored
 * version's number) and a time range; it runs in a worker thread and answers 202 with its id at
 * once. Read its progress and, once done, its report; cancel it. Starting and cancelling need the
 * account's admin role and are audited; analysts read.
 */
export const eventTypeParams = accountParams.extend({ event_type: z.string().regex(EVENT_TYPE).meta({ example: 'account_register' }) });
const backtestParams = eventTypeParams.extend({ backtest_id: z.string().regex(/^bt_[0-9a-f]{16}$/).meta({ example: 'bt_5e1d0c9a8b7f6e5d' }) });

export const when = z.string().max(40).describe('An ISO-8601 date or date-time, or a time ago: `30m`, `12h`, `7d`');
const startBody = z.object({
  yaml: z.string().max(FILE_CAPS.ruleFile).optional().describe('The candidate rule file, as text (at most 32 KiB)'),
  version: z.number().int().min(1).optional().describe('Or a stored version of this event type\'s rule set (a draft, say)'),
  since: when,
  until: when.optional().describe('Default: now'),
}).refine((b) => (b.yaml === undefined) !== (b.version === undefined), { message: 'send the candidate as "yaml" or as "version", one of the two' });

const counts = z.object({ evaluations: z.int(), replayed: z.int(), skipped: z.int() });
const stateRecord = <T extends z.ZodType>(value: T) => z.object({ approve: value, review: value, decline: value });
const ruleHits = z.object({ hits: z.int(), dry_run_hits: z.int(), score: z.number().describe('Points added, summed before the 0..100 clamp') });
const labelStats = z.object({
  by_state: stateRecord(z.object({ fraud: z.int(), legit: z.int() })),
  confusion: z.object({ true_positive: z.int(), false_positive: z.int(), false_negative: z.int(), true_negative: z.int() }).describe('Decline as the prediction of fraud'),
  precision: z.number().nullable(),
  recall: z.number().nullable(),
});
const stateScore = z.object({ state: z.enum(STATES), fraud_score: z.number() });
export const report = z.object({
  account: z.string(), event_type: z.string(), since: time, until: time,
  evaluations: z.int(), replayed: z.int(),
  skipped: z.object({ total: z.int(), reasons: z.object({ rules_failed: z.int(), request_invalid: z.int(), unreadable: z.int() }) }),
  changed: z.object({ state: z.int(), score: z.int() }),
  transitions: stateRecord(stateRecord(z.int())).describe('transitions[live][candidate]'),
  rules: z.array(z.object({ rule_name: z.string(), live: ruleHits, candidate: ruleHits })),
  sample: z.array(z.object({
    id: z.string(), evaluated_at: time, label: z.enum(['fraud', 'legit']).nullable(), live: stateScore, candidate: stateScore,
    rules_added: z.array(z.string()), rules_removed: z.array(z.string()),
  })).describe(`Up to ${SAMPLE_SIZE} changed decisions, oldest first; each id is a decision of the evaluation log`),
  labels: z.object({ labelled: z.int(), live: labelStats, candidate: labelStats }),
});
const summary = z.object({
  id: z.string(), event_type: z.string(),
  status: z.enum(['running', 'done', 'failed', 'cancelled']),
  since: time, until: time,
  rule_set_version: z.int().nullable().describe('The stored version tested; null for a file sent as text'),
  created_by: z.string(), created_at: time, finished_at: time.nullable(),
  progress: counts,
  error: z.string().nullable(),
});
const detail = summary.extend({ yaml: z.string().describe('The rule file tested'), report: report.nullable().describe('Null until done') });

const zeroLabels = {
  by_state: { approve: { fraud: 0, legit: 0 }, review: { fraud: 0, legit: 0 }, decline: { fraud: 0, legit: 0 } },
  confusion: { true_positive: 0, false_positive: 0, false_negative: 0, true_negative: 1 }, precision: null, recall: null,
};
const summaryExample = {
  id: 'bt_5e1d0c9a8b7f6e5d', event_type: 'account_register', status: 'done' as const, since: '2026-11-14T12:00:00.000Z', until: '2026-11-21T12:00:00.000Z',
  rule_set_version: null, created_by: 'user:usr_4f1c2a9b7d3e8f60', created_at: '2026-11-21T12:00:00.000Z', finished_at: '2026-11-21T12:00:04.000Z',
  progress: { evaluations: 2, replayed: 2, skipped: 0 }, error: null,
};
const yamlExample = 'rules:\n  - library: ip_tor\n    score: 50\n';
export const detailExample = {
  ...summaryExample, yaml: yamlExample,
  report: {
    account: 'acme', event_type: 'account_register', since: '2026-11-14T12:00:00.000Z', until: '2026-11-21T12:00:00.000Z', evaluations: 2, replayed: 2,
    skipped: { total: 0, reasons: { rules_failed: 0, request_invalid: 0, unreadable: 0 } }, changed: { state: 1, score: 1 },
    transitions: { approve: { approve: 1, review: 0, decline: 0 }, review: { approve: 0, review: 0, decline: 1 }, decline: { approve: 0, review: 0, decline: 0 } },
    rules: [{ rule_name: 'IP address is a Tor exit node', live: { hits: 1, dry_run_hits: 0, score: 30 }, candidate: { hits: 1, dry_run_hits: 0, score: 50 } }],
    sample: [{
      id: '019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b', evaluated_at: '2026-11-20T09:30:00.000Z', label: null,
      live: { state: 'review' as const, fraud_score: 30 }, candidate: { state: 'decline' as const, fraud_score: 50 }, rules_added: [], rules_removed: [],
    }],
    labels: { labelled: 1, live: zeroLabels, candidate: zeroLabels },
  },
};

function summaryOf(view: BacktestSummary): z.output<typeof summary> {
  return {
    id: view.id, event_type: view.event_type, status: view.status, since: iso(view.since), until: iso(view.until), rule_set_version: view.rule_set_version,
    created_by: view.created_by, created_at: iso(view.created_at), finished_at: isoOrNull(view.finished_at), progress: view.progress, error: view.error,
  };
}
const detailOf = (view: BacktestRecord): z.output<typeof detail> => ({ ...summaryOf(view), yaml: view.yaml, report: view.report });

export function timeOf(field: string, text: string, now: number): number {
  const ms = parseTimeOrAgo(text, now);
  if (ms === null) throw problems.invalidRequest([{ path: field, message: 'must be an ISO-8601 date or date-time, or a time ago (30m, 12h, 7d)' }]);
  return ms;
}

const conflictOf = (error: unknown) => (error instanceof BacktestConflict ? problems.conflict(error.message) : error);

export const startBacktest = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets/:event_type/backtests', tag: 'rules', operationId: 'startBacktest',
  summary: 'Backtest a rule file on the logged evaluations of a time range',
  description: 'Every evaluation of the account and event type logged in the range is replayed through the candidate from the log alone (the facts, history and lists as they were answered; nothing is enriched again), beside what live decided. ' +
    'Runs in a worker thread, off the request path: the answer is at once, with the id to read progress and the report from. One backtest at a time per account on a replica.',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: startBody,
  example: { yaml: yamlExample, since: '7d' },
  success: { status: 202, description: 'Started', schema: summary, example: { ...summaryExample, status: 'running', finished_at: null, progress: { evaluations: 0, replayed: 0, skipped: 0 } } },
  problems: { 409: 'A backtest of this account is already running on this replica' },
  handler: async ({ account, params, body, principal, services, now }) => {
    const since = timeOf('since', body.since, now);
    const until = body.until === undefined ? now : timeOf('until', body.until, now);
    if (until <= since) throw problems.invalidRequest([{ path: 'until', message: 'must be after since' }]);
    let yaml = body.yaml;
    if (body.version !== undefined) {
      const stored = await services.store.ruleSets.get(account.id, params.event_type, body.version);
      if (stored === undefined) throw problems.resourceNotFound(`no version ${body.version} of rule set "${params.event_type}"`);
      yaml = stored.yaml;
    }
    const parsed = parseRuleFile(params.event_type, `${params.event_type}.yaml`, yaml!);
    if ('problems' in parsed) {
      throw problems.invalidRequest(parsed.problems.map((p) => ({
        path: body.version === undefined ? 'yaml' : 'version',
        message: `${p.path === '' ? '(file)' : p.path}${p.line === null ? '' : ` (line ${p.line}, column ${p.column})`}: ${p.message}`,
      })));
    }
    const started = await services.backtests.start(
      { account: account.id, eventType: params.event_type, since, until, yaml: yaml!, ruleSetVersion: body.version ?? null },
      { actor: principal.actor },
    ).catch((error: unknown) => {
      throw conflictOf(error);
    });
    return summaryOf(started);
  },
});

export const listBacktests = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/backtests', tag: 'rules', operationId: 'listBacktests',
  summary: 'The event type\'s recent backtests, newest first (without their reports)',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  success: { status: 200, description: 'The last 50', schema: z.object({ backtests: z.array(summary) }), example: { backtests: [summaryExample] } },
  handler: async ({ account, params, services }) => {
    const rows = await services.backtests.records.list(account.id, params.event_type);
    return { backtests: rows.map((row) => summaryOf(services.backtests.live(row))) };
  },
});

export const getBacktest = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/backtests/:backtest_id', tag: 'rules', operationId: 'getBacktest',
  summary: 'A backtest: its progress, and once done its report',
  access: { role: 'analyst', account: true },
  params: backtestParams,
  success: { status: 200, description: 'The backtest', schema: detail, example: detailExample },
  handler: async ({ account, params, services }) => {
    const view = await services.backtests.get(account.id, params.event_type, params.backtest_id);
    if (view === undefined) throw problems.resourceNotFound(`no backtest "${params.backtest_id}"`);
    return detailOf(view);
  },
});

export const cancelBacktest = adminRoute({
  method: 'DELETE', url: '/accounts/:account/rule-sets/:event_type/backtests/:backtest_id', tag: 'rules', operationId: 'cancelBacktest',
  summary: 'Cancel a running backtest',
  access: { role: 'admin', account: true },
  params: backtestParams,
  success: { status: 200, description: 'The backtest, cancelled', schema: detail, example: { ...detailExample, status: 'cancelled', report: null } },
  problems: { 409: 'The backtest has already ended, or another replica runs it (cancel it there)' },
  handler: async ({ account, params, principal, services }) => {
    const view = await services.backtests.cancel(account.id, params.event_type, params.backtest_id, { actor: principal.actor }).catch((error: unknown) => {
      throw conflictOf(error);
    });
    if (view === undefined) throw problems.resourceNotFound(`no backtest "${params.backtest_id}"`);
    return detailOf(view);
  },
});

export const backtestRoutes = [startBacktest, listBacktests, getBacktest, cancelBacktest];
