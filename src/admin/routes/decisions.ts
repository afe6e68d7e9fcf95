import { Readable } from 'node:stream';
import { z } from 'zod';
import { normalizeDomain, parseEmail } from '../../email/address.js';
import { loggedOutcome, outcomeDifferences, replay, ReplayError, type LoggedEvaluation } from '../../evaluation/replay.js';
import { problems } from '../../http/problem.js';
import { CompiledVersions } from '../../rules/compiled-versions.js';
import { FIELD_PATHS, VELOCITY_FIELD } from '../../rules/fields.js';
import { ipKeyRange, MAX_PAGE, type DecisionFilter, type DecisionRecord, type DecisionSummary } from '../../store/decisions.js';
import type { Store } from '../../store/index.js';
import { LABELS, MAX_LABEL_REASON } from '../../store/labels.js';
import { EVENT_TYPE } from '../../store/rule-sets.js';
import { scoreDetail } from '../decision-views.js';
import { adminRoute, type AdminServices } from '../route.js';
import { accountParams, iso, time } from '../schemas.js';

/**
 * Decisions (issue 14): an account's evaluation log searched, newest first, a page at a time; one
 * decision in full, with each rule's outcome and the facts it read, replayed from the log through
 * the rule set version that decided (src/evaluation/replay.ts); and its label. Analysts and admins
 * of the account; anyone else gets the 404 of a missing account, and another account's evaluation
 * id the 404 of a missing one. Filters compare what the log stores: the e-mail normalised as the
 * evaluation normalised it, the domain in A-labels, an address or CIDR as a range of keys.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const decisionParams = accountParams.extend({
  id: z.string().transform((id) => id.toLowerCase()).pipe(z.string().regex(UUID)).meta({ example: '019a4f6e-8c1b-7d2e-9f3a-1b2c3d4e5f60' }),
});

/** Opaque to clients: the last id of a page, base64url-encoded, so its shape may change. */
const encodeCursor = (id: string) => Buffer.from(id, 'latin1').toString('base64url');
const decodeCursor = (cursor: string) => Buffer.from(cursor, 'base64url').toString('latin1');

/** A filter value read the way the log wrote it, or a field error. */
const normalised = <T>(read: (text: string) => T | null, message: string) =>
  z.string().max(300).transform((text, ctx) => {
    const value = read(text.trim());
    if (value === null) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return value;
  });

const state = z.enum(['approve', 'review', 'decline']);

const searchQuery = z.object({
  from: z.iso.datetime({ offset: true }).optional().describe('Evaluated at or after this time'),
  to: z.iso.datetime({ offset: true }).optional().describe('Evaluated before this time'),
  state: state.optional(),
  event_type: z.string().regex(EVENT_TYPE, '1 to 64 letters, digits, _ or -').optional(),
  email: normalised((text) => {
    const parsed = parseEmail(text);
    return 'error' in parsed ? null : parsed.normalized.toLowerCase();
  }, 'must be an e-mail address').optional().describe('Exact address, compared as the evaluation normalised it (case, IDN)').meta({ example: 'jane.doe@example.com' }),
  domain: normalised(normalizeDomain, 'must be a domain name').optional().describe('The e-mail domain (an internationalised one as sent or in A-labels)'),
  ip: normalised(ipKeyRange, 'must be an IPv4 or IPv6 address, or a CIDR range').optional().describe('An address, or a CIDR range (`203.0.113.0/24`, `2001:db8::/32`)').meta({ example: '203.0.113.0/24' }),
  user_id: z.string().min(1).max(256).optional(),
  device_hash: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal digits').optional(),
  rule: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a rule id: lower-case letters, digits and _').optional().describe('A rule that fired (live or dry-run)').meta({ example: 'email_disposable' }),
  label: z.enum([...LABELS, 'none']).optional().describe('`none`: not labelled'),
  cursor: z.string().max(64).refine((c) => UUID.test(decodeCursor(c)), 'not a cursor this API gave').optional().describe('`next_cursor` of the previous page'),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(50),
});

type FilterQuery = Omit<z.output<typeof searchQuery>, 'cursor' | 'limit'>;
const filterOf = (q: FilterQuery): DecisionFilter => ({
  from: q.from === undefined ? undefined : Date.parse(q.from), to: q.to === undefined ? undefined : Date.parse(q.to),
  state: q.state, eventType: q.event_type, email: q.email, domain: q.domain, ipKeys: q.ip, userId: q.user_id,
  deviceHash: q.device_hash, rule: q.rule, label: q.label,
});

const summary = z.object({
  id: z.string(),
  evaluated_at: time,
  event_type: z.string(),
  state,
  score: z.number().int().describe('fraud_score'),
  email: z.string().describe('Normalised'),
  ip: z.string(),
  user_id: z.string().nullable(),
  rules: z.array(z.string()).describe('Ids of the rules that fired, live and dry-run'),
  label: z.enum(LABELS).nullable(),
});
const summaryOf = (d: DecisionSummary): z.output<typeof summary> => ({
  id: d.id, evaluated_at: iso(d.evaluated_at), event_type: d.event_type, state: d.state as z.output<typeof state>, score: d.fraud_score,
  email: d.email, ip: d.ip, user_id: d.user_id, rules: d.rules, label: d.label,
});
const summaryExample = {
  id: '019a4f6e-8c1b-7d2e-9f3a-1b2c3d4e5f60', evaluated_at: '2026-11-21T12:00:00.000Z', event_type: 'account_register', state: 'decline' as const, score: 40,
  email: 'jane.doe@mailinator.com', ip: '203.0.113.7', user_id: null, rules: ['email_disposable'], label: null,
};

export const searchDecisions = adminRoute({
  method: 'GET', url: '/accounts/:account/decisions', tag: 'decisions', operationId: 'searchDecisions',
  summary: 'Search the evaluation log, newest first, a page at a time',
  description: 'Filters combine (all must hold). Pages follow `next_cursor` until it is null; a page never repeats or skips an evaluation, even while new ones are logged. '
    + 'Evaluations are kept RETENTION_DAYS; one made a moment ago reaches the log within a fraction of a second.',
  access: { role: 'analyst', account: true },
  params: accountParams,
  query: searchQuery,
  success: {
    status: 200, description: 'One page',
    schema: z.object({ decisions: z.array(summary), next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last') }),
    example: { decisions: [summaryExample], next_cursor: 'MDE5YTRmNmUtOGMxYi03ZDJlLTlmM2EtMWIyYzNkNGU1ZjYw' },
  },
  handler: async ({ account, query: q, services }) => {
    const filter = filterOf(q);
    // One more than asked: a full page says whether there is a next one without an empty last page.
    const rows = await services.store.decisions.search(account.id, filter, { beforeId: q.cursor === undefined ? undefined : decodeCursor(q.cursor), limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    return { decisions: page.map(summaryOf), next_cursor: rows.length > q.limit ? encodeCursor(page.at(-1)!.id) : null };
  },
});

/** The most rows one CSV export holds, newest first: narrow the filters (a time range) for the rest. */
export const MAX_EXPORT_ROWS = 10_000;
const EXPORT_COLUMNS = ['id', 'evaluated_at', 'event_type', 'state', 'score', 'email', 'ip', 'user_id', 'device_hash', 'rules', 'label'] as const;

/**
 * One CSV cell (RFC 4180: quoted when it holds a comma, quote or line break). A cell a spreadsheet
 * would read as a formula (starting with = + - @, a tab or a carriage return: OWASP's
 * "CSV injection") is prefixed with an apostrophe, so an e-mail address or user id a client sent is
 * shown, never run.
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

async function* exportRows(store: Store, account: string, filter: DecisionFilter): AsyncGenerator<string> {
  yield `${EXPORT_COLUMNS.join(',')}\r\n`;
  let beforeId: string | undefined;
  for (let sent = 0; sent < MAX_EXPORT_ROWS;) {
    const rows = await store.decisions.search(account, filter, { beforeId, limit: Math.min(MAX_PAGE, MAX_EXPORT_ROWS - sent) });
    if (rows.length === 0) return;
    yield rows.map((d) => [d.id, iso(d.evaluated_at), d.event_type, d.state, d.fraud_score, d.email, d.ip, d.user_id, d.device_hash, d.rules.join(' '), d.label]
      .map(csvCell).join(',') + '\r\n').join('');
    sent += rows.length;
    beforeId = rows.at(-1)!.id;
  }
}

export const exportDecisions = adminRoute({
  method: 'GET', url: '/accounts/:account/decisions/export', tag: 'decisions', operationId: 'exportDecisions',
  summary: 'A search exported as CSV, newest first',
  description: `The search's filters; at most ${MAX_EXPORT_ROWS.toLocaleString('en')} rows (narrow the time range for more). Streamed a page at a time, `
    + `so memory does not grow with the export. Columns: ${EXPORT_COLUMNS.join(', ')}. A cell starting with = + - @ is prefixed with an apostrophe `
    + '(a spreadsheet shows it, never runs it).',
  access: { role: 'analyst', account: true },
  params: accountParams,
  query: searchQuery.omit({ cursor: true, limit: true }),
  success: { status: 200, description: 'CSV (RFC 4180), a header row first', mediaType: 'text/csv' },
  handler: async ({ account, query: q, services, reply, now }) => {
    const stamp = iso(now).slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
    reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="decisions-${account.id}-${stamp}.csv"`)
      .header('cache-control', 'no-store');
    return Readable.from(exportRows(services.store, account.id, filterOf(q))) as never;
  },
});

/** Bucket widths a chart of decisions over time uses; `auto` picks the narrowest that fits the range in MAX_BUCKETS. */
const BUCKETS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
type BucketName = keyof typeof BUCKETS;
export const MAX_BUCKETS = 400;
const DEFAULT_STATS_RANGE_MS = BUCKETS.day;
const bucketCount = (from: number, to: number, width: number) => Math.ceil(to / width) - Math.floor(from / width);

export const decisionStats = adminRoute({
  method: 'GET', url: '/accounts/:account/decisions/stats', tag: 'decisions', operationId: 'decisionStats',
  summary: 'How many decisions of each state, per minute, hour or day: the console\'s chart',
  description: `The same filters as the search. \`from\` defaults to 24 hours before \`to\`, \`to\` to now. Buckets are aligned to the minute, hour or UTC day and `
    + `every bucket of the range is listed, oldest first, zeros included; at most ${MAX_BUCKETS} (\`bucket=auto\`, the default, picks the narrowest width that fits). `
    + 'It counts every matching evaluation of the range, so its cost grows with the range: a day of a busy account is a few hundred thousand index rows.',
  access: { role: 'analyst', account: true },
  params: accountParams,
  query: searchQuery.omit({ cursor: true, limit: true }).extend({
    bucket: z.enum(['auto', 'minute', 'hour', 'day']).default('auto').describe(`Bucket width; \`auto\`: the narrowest with at most ${MAX_BUCKETS} buckets`),
  }),
  success: {
    status: 200, description: 'Counts per bucket',
    schema: z.object({
      from: time, to: time,
      bucket: z.enum(['minute', 'hour', 'day']),
      buckets: z.array(z.object({ start: time, approve: z.number().int(), review: z.number().int(), decline: z.number().int() })),
    }),
    example: { from: '2026-11-21T00:00:00.000Z', to: '2026-11-21T02:00:00.000Z', bucket: 'hour' as const, buckets: [
      { start: '2026-11-21T00:00:00.000Z', approve: 412, review: 31, decline: 9 }, { start: '2026-11-21T01:00:00.000Z', approve: 388, review: 27, decline: 14 },
    ] },
  },
  problems: { 400: `A range of more than ${MAX_BUCKETS} buckets of the width asked for, or \`from\` not before \`to\`` },
  handler: async ({ account, query: q, services, now }) => {
    const to = q.to === undefined ? now : Date.parse(q.to);
    const from = q.from === undefined ? to - DEFAULT_STATS_RANGE_MS : Date.parse(q.from);
    if (from >= to) throw problems.invalidQuery([{ path: 'from', message: 'must be before to' }]);
    const bucket: BucketName | undefined = q.bucket === 'auto'
      ? (Object.keys(BUCKETS) as BucketName[]).find((name) => bucketCount(from, to, BUCKETS[name]) <= MAX_BUCKETS)
      : q.bucket;
    if (bucket === undefined || bucketCount(from, to, BUCKETS[bucket]) > MAX_BUCKETS) {
      throw problems.invalidQuery([{ path: q.bucket === 'auto' ? 'from' : 'bucket', message: `the range needs more than ${MAX_BUCKETS} buckets${q.bucket === 'auto' ? ' of a day' : ''}: narrow it${q.bucket === 'auto' ? '' : ' or widen the bucket'}` }]);
    }
    const width = BUCKETS[bucket];
    const first = Math.floor(from / width) * width;
    const buckets = Array.from({ length: bucketCount(from, to, width) }, (_, i) => ({ start: first + i * width, approve: 0, review: 0, decline: 0 }));
    for (const row of await services.store.decisions.countByState(account.id, { ...filterOf(q), from, to }, width)) {
      const slot = buckets[(row.start - first) / width];
      if (slot && (row.state === 'approve' || row.state === 'review' || row.state === 'decline')) slot[row.state] += row.count;
    }
    return { from: iso(from), to: iso(to), bucket, buckets: buckets.map((b) => ({ ...b, start: iso(b.start) })) };
  },
});

const evidence = z.object({
  field: z.union([z.enum(FIELD_PATHS), z.string().regex(VELOCITY_FIELD).describe('A velocity counter of the rule file: velocity.<name>')]),
  value: z.union([z.string(), z.number(), z.boolean()]).nullable(),
  reading: z.enum(['value', 'unknown', 'absent']),
  unavailable: z.string().nullable().describe('The check that could not run, when that made the reading unknown'),
  condition: z.string().nullable().describe('What the rule compared it with, as the part holds (`≥ 5`); null inside a `not`'),
});
const ruleOutcome = z.object({
  id: z.string(),
  name: z.string(),
  score: z.number().int(),
  mode: z.enum(['live', 'dry_run', 'off']),
  outcome: z.enum(['fired', 'not_fired', 'unknown']),
  points: z.number().int().describe('What it added to the score: its score when it fired live, else 0'),
  evidence: z.array(evidence).describe('The facts it read, in order'),
});
const labelInfo = z.object({ label: z.enum(LABELS), reason: z.string().nullable(), author: z.string(), labelled_at: time });
const labelOf = (row: NonNullable<DecisionRecord['labelled']>): z.output<typeof labelInfo> =>
  ({ label: row.label, reason: row.reason, author: row.author, labelled_at: iso(row.created_at) });

const REPLAY_STATUS = {
  replayed: 'Replayed through the version that decided; it gives the logged outcome',
  differs: 'Replayed, but the outcome differs from the logged one (`differences`): the rules shown are not exactly what decided',
  rules_failed: 'The rule step had failed when this was evaluated: no rule set decided',
  version_gone: 'The rule set version that decided is no longer in the store',
  not_replayable: 'The logged request or answer cannot be replayed by this version of the service',
} as const;

const detail = summary.extend({
  email_domain: z.string(),
  device_hash: z.string().nullable(),
  request: z.record(z.string(), z.unknown()).describe('The request as validated: e-mail and IP as sent, user, device_intelligence'),
  response: z.record(z.string(), z.unknown()).describe('The answer exactly as sent: every fact, the score, signals, unavailable'),
  unavailable: z.array(z.string()).describe('Checks that could not run (from the answer)'),
  rule_set: z.object({ id: z.number().int(), event_type: z.string(), version: z.number().int() }).nullable().describe('The version that decided; null when unknown or gone'),
  thresholds: z.object({ review: z.number().int(), decline: z.number().int() }).nullable()
    .describe('The score bands of the version that decided: review from `review`, decline from `decline`; null when it is gone'),
  replay: z.object({
    status: z.enum(Object.keys(REPLAY_STATUS) as [keyof typeof REPLAY_STATUS, ...Array<keyof typeof REPLAY_STATUS>]),
    detail: z.string(),
    differences: z.array(z.string()).describe('Parts of the outcome that differ between the replay and the log'),
  }),
  rule_outcomes: z.array(ruleOutcome).nullable().describe('Each rule of the version, in order; null when it could not be replayed (see `replay`)'),
  shadow: z.object({
    version: z.int(), fraud_score: z.number(), state: z.enum(['approve', 'review', 'decline']), fired: z.array(z.string()), details: z.array(scoreDetail), dry_run: z.array(scoreDetail),
  }).nullable().describe('What the shadow rule set decided beside the live one (README "Shadow"), never answered; null when none ran'),
  labelled: labelInfo.nullable(),
  previous_user_evaluation: z.string().nullable().describe('The same user\'s evaluation before this one, when the request named a user'),
});

const compiledByStore = new WeakMap<Store, CompiledVersions>();
/** Versions compiled for replay, per store (a bounded cache: see CompiledVersions). */
function compiledVersions(store: Store): CompiledVersions {
  let compiled = compiledByStore.get(store);
  if (compiled === undefined) {
    compiled = new CompiledVersions((id) => store.decisions.ruleSetVersion(id));
    compiledByStore.set(store, compiled);
  }
  return compiled;
}

async function explain(record: DecisionRecord, store: Store): Promise<Pick<z.output<typeof detail>, 'rule_set' | 'replay' | 'rule_outcomes' | 'thresholds'>> {
  const logged: LoggedEvaluation = { id: record.id, request: record.request, response: record.response };
  const compiled = record.rule_set_version === null ? undefined : await compiledVersions(store).get(record.rule_set_version);
  const version = compiled && compiled.version.account_id === record.account_id ? compiled : undefined;
  const ruleSet = version && { id: version.version.id, event_type: version.version.event_type, version: version.version.version };
  const status = (s: keyof typeof REPLAY_STATUS, differences: string[] = []) => ({ status: s, detail: REPLAY_STATUS[s], differences });
  const thresholds = version && 'ruleSet' in version ? { review: version.ruleSet.thresholds.review, decline: version.ruleSet.thresholds.decline } : null;
  try {
    const outcome = loggedOutcome(logged);
    if (outcome === null) return { rule_set: ruleSet ?? null, thresholds, replay: status('rules_failed'), rule_outcomes: null };
    if (version === undefined || !('ruleSet' in version)) return { rule_set: null, thresholds: null, replay: status('version_gone'), rule_outcomes: null };
    const replayed = replay(logged, version.ruleSet);
    const differences = outcomeDifferences(replayed.outcome, outcome);
    return {
      rule_set: ruleSet!,
      thresholds,
      replay: status(differences.length === 0 ? 'replayed' : 'differs', differences),
      rule_outcomes: replayed.rules.map((r) => ({ ...r, points: r.outcome === 'fired' && r.mode === 'live' ? r.score : 0 })),
    };
  } catch (error) {
    if (error instanceof ReplayError) return { rule_set: ruleSet ?? null, thresholds, replay: { ...status('not_replayable'), detail: error.message }, rule_outcomes: null };
    throw error;
  }
}

/** Looks the evaluation up; one made a moment ago may still be in this replica's log queue: written, then looked up again. */
async function findDecision(services: AdminServices, account: string, id: string): Promise<DecisionRecord> {
  const decisions = services.store.decisions;
  const queued = services.store.log.holds(id); // asked first: after a miss it may have been written since
  const found = (await decisions.get(account, id)) ?? (queued ? (await services.store.log.flush(), await decisions.get(account, id)) : undefined);
  if (found === undefined) throw problems.resourceNotFound(`account "${account}" has no evaluation ${id} in its log (kept RETENTION_DAYS)`);
  return found;
}

const detailExample = {
  ...summaryExample, email_domain: 'mailinator.com', device_hash: null,
  request: { ip: '203.0.113.7', email: 'Jane.Doe@mailinator.com', event_type: 'account_register' },
  response: { id: summaryExample.id, score: { fraud_score: 40, state: 'decline', details: [{ rule_id: 'email_disposable', rule_name: 'Email address is disposable', rule_type: 'static', score: 40 }] }, email: { disposable: true }, unavailable: [] },
  unavailable: [],
  rule_set: { id: 7, event_type: 'account_register', version: 3 },
  thresholds: { review: 20, decline: 40 },
  replay: { status: 'replayed' as const, detail: REPLAY_STATUS.replayed, differences: [] },
  rule_outcomes: [
    { id: 'email_disposable', name: 'Email address is disposable', score: 40, mode: 'live' as const, outcome: 'fired' as const, points: 40, evidence: [{ field: 'email.disposable' as const, value: true, reading: 'value' as const, unavailable: null, condition: '= true' }] },
    { id: 'ip_tor', name: 'IP address is a Tor exit node', score: 50, mode: 'live' as const, outcome: 'not_fired' as const, points: 0, evidence: [{ field: 'ip.is_tor' as const, value: false, reading: 'value' as const, unavailable: null, condition: '= true' }] },
  ],
  shadow: null,
  labelled: null,
  previous_user_evaluation: null,
};

export const getDecision = adminRoute({
  method: 'GET', url: '/accounts/:account/decisions/:id', tag: 'decisions', operationId: 'getDecision',
  summary: 'One decision in full: request, facts, each rule\'s outcome and the evidence it read, label',
  description: 'The rules are replayed from the log through the rule set version that decided, with nothing enriched again. When that cannot be done (the rule step had failed, '
    + 'the version is gone, the logged answer is from a version of the service this one cannot read) `replay.status` says so and `rule_outcomes` is null.',
  access: { role: 'analyst', account: true },
  params: decisionParams,
  success: { status: 200, description: 'The decision', schema: detail, example: detailExample },
  handler: async ({ account, params, services }) => {
    const record = await findDecision(services, account.id, params.id);
    const response = record.response as { unavailable?: unknown };
    return {
      ...summaryOf(record), email_domain: record.email_domain, device_hash: record.device_hash,
      request: record.request as Record<string, unknown>, response: record.response as Record<string, unknown>,
      unavailable: Array.isArray(response.unavailable) ? (response.unavailable as string[]) : [],
      ...(await explain(record, services.store)),
      shadow: record.shadow as z.output<typeof detail>['shadow'],
      labelled: record.labelled && labelOf(record.labelled),
      previous_user_evaluation: record.previous_of_user,
    };
  },
});

const labelBody = z.strictObject({
  label: z.enum(LABELS).describe('`fraud`: it was abuse; `legit`: it was a real user'),
  reason: z.string().trim().min(1).max(MAX_LABEL_REASON).optional(),
});
const labelled = labelInfo.extend({ evaluation_id: z.string() });
const labelledExample = { evaluation_id: summaryExample.id, label: 'fraud' as const, reason: 'Chargeback on the first order', author: 'user:usr_4f1c2a9b7d3e8f60', labelled_at: '2026-11-22T09:00:00.000Z' };

export const setLabel = adminRoute({
  method: 'PUT', url: '/accounts/:account/decisions/:id/label', tag: 'lists', operationId: 'setDecisionLabel',
  summary: 'Label a decision fraud or legit (replacing its label)',
  description: 'The label the public feedback route sets (`POST /v1/risk/evaluations/{id}/feedback`), one per evaluation, the latest wins; audited.',
  access: { role: 'analyst', account: true },
  params: decisionParams,
  body: labelBody,
  example: { label: 'fraud', reason: 'Chargeback on the first order' },
  success: { status: 200, description: 'The label', schema: labelled, example: labelledExample },
  handler: async ({ account, params, body, principal, services }) => {
    await findDecision(services, account.id, params.id);
    const row = await services.store.labels.set(account.id, params.id, body.label, body.reason ?? null, { actor: principal.actor, audit: true });
    return { evaluation_id: params.id, ...labelOf(row) };
  },
});

export const removeLabel = adminRoute({
  method: 'DELETE', url: '/accounts/:account/decisions/:id/label', tag: 'lists', operationId: 'removeDecisionLabel',
  summary: 'Remove a decision\'s label',
  access: { role: 'analyst', account: true },
  params: decisionParams,
  success: { status: 200, description: 'The label as it was', schema: labelled, example: labelledExample },
  handler: async ({ account, params, principal, services }) => {
    const row = await services.store.labels.remove(account.id, params.id, { actor: principal.actor });
    return { evaluation_id: params.id, ...labelOf(row) };
  },
});

export const decisionRoutes = [searchDecisions, decisionStats, exportDecisions, getDecision, setLabel, removeLabel];
