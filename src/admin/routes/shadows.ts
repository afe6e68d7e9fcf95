import { z } from 'zod';
import { adminRoute } from '../route.js';
import { iso, time } from '../schemas.js';
import { problems } from '../../http/problem.js';
import type { RuleSetShadowRow } from '../../store/schema.js';
import { detailExample, eventTypeParams, report, timeOf, when } from './backtests.js';
import { compareShadow, MAX_COMPARED } from '../../backtest/shadow-comparison.js';

/**
 * Shadow rule sets through the admin API (issue 16): put a version (the draft by default) in
 * shadow beside the live set, see which one runs, stop it, and compare live with shadow over the
 * evaluations logged with a shadow outcome. Starting and stopping need the account's admin role
 * and are audited (`rule_set.shadow.start`, `rule_set.shadow.stop`); analysts read.
 */
const shadowView = z.object({
  event_type: z.string(),
  version: z.int().describe('The version in shadow (its number)'),
  started_by: z.string(),
  started_at: time,
  yaml: z.string().describe('The rule file that runs: the version\'s text when the shadow started'),
});
const shadowExample = {
  event_type: 'account_register', version: 4, started_by: 'user:usr_4f1c2a9b7d3e8f60', started_at: '2026-11-21T12:00:00.000Z',
  yaml: 'rules:\n  - library: ip_tor\n    score: 50\n',
};
const viewOf = (row: RuleSetShadowRow): z.output<typeof shadowView> => ({
  event_type: row.event_type, version: row.version, started_by: row.started_by, started_at: iso(row.started_at), yaml: row.yaml,
});

export const getShadow = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/shadow', tag: 'rules', operationId: 'getRuleSetShadow',
  summary: 'The version the event type runs in shadow',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  success: { status: 200, description: 'The shadow', schema: shadowView, example: shadowExample },
  problems: { 404: 'No shadow runs for this event type' },
  handler: async ({ account, params, services }) => {
    const row = await services.store.shadows.get(account.id, params.event_type);
    if (row === undefined) throw problems.resourceNotFound(`no shadow rule set for ${params.event_type}`);
    return viewOf(row);
  },
});

export const startShadow = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets/:event_type/shadow', tag: 'rules', operationId: 'startRuleSetShadow',
  summary: 'Run a version in shadow beside the live rule set',
  description: 'On every evaluation of this event type the shadow is scored on the same facts as the live set (nothing is enriched twice); its outcome is logged with the evaluation, never answered or counted in metrics. ' +
    'One shadow per event type: starting another replaces it. The version\'s text is copied: a draft edited later runs as it was until the shadow is started again. Reaches every replica within RELOAD_INTERVAL_MS, this one at once.',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: z.object({ version: z.number().int().min(1).optional().describe('A stored version of this event type; default: its draft') }),
  example: { version: 4 },
  success: { status: 200, description: 'The shadow now running', schema: shadowView, example: shadowExample },
  problems: { 404: 'No such version, or no draft' },
  handler: async ({ account, params, body, principal, services }) => {
    const row = await services.store.shadows.start(account.id, params.event_type, body.version, { actor: principal.actor });
    await services.reloadConfiguration();
    return viewOf(row);
  },
});

export const stopShadow = adminRoute({
  method: 'DELETE', url: '/accounts/:account/rule-sets/:event_type/shadow', tag: 'rules', operationId: 'stopRuleSetShadow',
  summary: 'Stop the event type\'s shadow',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  success: { status: 204, description: 'Stopped (every replica within RELOAD_INTERVAL_MS, this one at once)' },
  problems: { 404: 'No shadow runs for this event type' },
  handler: async ({ account, params, principal, services }) => {
    const row = await services.store.shadows.stop(account.id, params.event_type, { actor: principal.actor });
    if (row === undefined) throw problems.resourceNotFound(`no shadow rule set for ${params.event_type}`);
    await services.reloadConfiguration();
  },
});

const comparison = report.extend({
  shadow_versions: z.array(z.object({ version: z.int(), evaluations: z.int() })).describe('The shadow versions that scored the evaluations compared'),
  truncated: z.boolean().describe(`${MAX_COMPARED} evaluations compared before the range ended: \`until\` is where it stopped; ask again from there`),
});

export const compareShadowRoute = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/shadow/comparison', tag: 'rules', operationId: 'compareRuleSetShadow',
  summary: 'Live against shadow over the evaluations logged with a shadow outcome',
  description: 'The backtest\'s report, the candidate being the shadow as it decided at the time (both outcomes read from the log, nothing replayed): state transitions live → shadow, each rule\'s hits and points, up to 100 decisions that differ, labels. ' +
    `At most ${MAX_COMPARED} evaluations a call (then \`truncated\`).`,
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  query: z.object({ since: when, until: when.optional().describe('Default: now') }),
  success: { status: 200, description: 'The comparison', schema: comparison, example: { ...detailExample.report, shadow_versions: [{ version: 4, evaluations: 2 }], truncated: false } },
  handler: async ({ account, params, query, services, now }) => {
    const since = timeOf('since', query.since, now);
    const until = query.until === undefined ? now : timeOf('until', query.until, now);
    if (until <= since) throw problems.invalidRequest([{ path: 'until', message: 'must be after since' }]);
    return compareShadow(services.store.engine.db, { account: account.id, eventType: params.event_type, since, until });
  },
});

export const shadowRoutes = [getShadow, startShadow, stopShadow, compareShadowRoute];
