import { z } from 'zod';
import { emailFactsSchema } from '../../email/facts.js';
import { ipFactsSchema } from '../../ip/facts.js';
import { evaluationRequestSchema, validateEvaluationRequest } from '../../request/evaluation-request.js';
import { FILE_CAPS } from '../../files/caps.js';
import { problems } from '../../http/problem.js';
import { explainRuleSet } from '../../rules/engine.js';
import { ruleFileData, ruleKey, writeRuleFile, type RuleFileData } from '../../rules/edit.js';
import { ruleFileSchema, ruleSchema } from '../../rules/file-schema.js';
import { parseRuleFile, RuleSetError } from '../../rules/rule-file.js';
import type { RuleSet } from '../../rules/rule-set.js';
import { StoreRequestError } from '../../store/errors.js';
import { ruleFileProblems, type RuleSetVersionWithText } from '../../store/rule-sets.js';
import { ruleSetLabel } from '../../rules/rule-file.js';
import { adminRoute, type AdminContext } from '../route.js';
import { comment, contentOf, eventTypeParams, ruleSetContent, sha256, summaryOf, versionExample, versionNumber, versionSummary, versionView, versionViewOf } from '../rule-views.js';
import { explanation, scoreDetail } from '../decision-views.js';
import { published } from './rule-sets.js';

/**
 * The draft of an event type's rule set: edited whole (as YAML, or as data: the file's JSON form)
 * or a piece at a time (a rule added, replaced or removed, the thresholds), validated without
 * saving, dry-run against one request with the real enrichment, and published with a comment.
 * An edit with no draft starts one from the live version. Edits made as data are written back into
 * the YAML text, keeping its comments around what did not change (src/rules/edit.ts). Every text
 * goes through the rule-file validation (`rules:check`'s), and its problems name the path in the
 * file, with the line and column for YAML.
 */

const ruleFileText = z.string().max(FILE_CAPS.ruleFile).meta({ description: 'A rule file (docs/rules.md), at most 32 KiB', example: 'rules:\n  - library: ip_tor\n    score: 50\n' });

const ruleSetBody = z.object({
  yaml: ruleFileText.optional(),
  rule_set: ruleFileSchema.optional().meta({ description: 'The rule file as data (the JSON form of the YAML; rules/schema.json)' }),
}).refine((b) => (b.yaml === undefined) !== (b.rule_set === undefined), { message: 'send the rule set as "yaml" or as "rule_set", one of the two' });

const draftExample = { ...versionExample, version: 4, status: 'draft' as const, comment: 'Tor to 50', published_at: null };

/** The draft changed by `edit` (on the file as data), in one transaction; the new draft's view. */
async function editDraft(ctx: AdminContext<{ event_type: string }, unknown, { comment?: string }>, edit: (data: RuleFileData, base: RuleSetVersionWithText) => RuleFileData | string, rebase = false) {
  const { account, params, principal, services, body } = ctx;
  const saved = await services.store.ruleSets.editDraft(account.id, params.event_type, (base) => {
    const next = edit(ruleFileData(base.yaml), base);
    return typeof next === 'string' ? next : writeRuleFile(base.yaml, next);
  }, { actor: principal.actor, comment: body.comment ?? null }, rebase);
  return versionViewOf((await services.store.ruleSets.get(account.id, params.event_type, saved.version))!);
}

/** The body's rule set as the YAML text it stands for (data is written over `base`, keeping its comments). */
function textOf(body: z.infer<typeof ruleSetBody>, base: string | null, request: { body: unknown }): string {
  if (body.yaml !== undefined) return body.yaml;
  // As sent, not as parsed: defaults the schema fills in are not written into the file.
  return writeRuleFile(base, (request.body as { rule_set: RuleFileData }).rule_set);
}

export const saveRuleSetDraft = adminRoute({
  method: 'PUT', url: '/accounts/:account/rule-sets/:event_type/draft', tag: 'rules', operationId: 'saveRuleSetDraft',
  summary: 'Replace the draft, as YAML or as data',
  description: 'Saving the whole draft again is also how a draft that something was published over (an import, a rollback) is made publishable: it then takes the next version number. As `yaml`: stored exactly as sent (an import). As `rule_set`: written into the current draft\'s (or the live version\'s) YAML, keeping the comments of what did not change. Problems name the path in the file, with line and column for YAML.',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: ruleSetBody.and(z.object({ comment: comment.optional() })),
  example: { rule_set: { rules: [{ library: 'email_disposable', score: 40 }, { library: 'ip_tor', score: 50 }] }, comment: 'Tor to 50' },
  success: { status: 200, description: 'The draft as it is now', schema: versionView, example: draftExample },
  handler: async (ctx) => editDraft(ctx, (_data, base) => textOf(ctx.body, base.yaml, ctx.request), true),
});

export const discardRuleSetDraft = adminRoute({
  method: 'DELETE', url: '/accounts/:account/rule-sets/:event_type/draft', tag: 'rules', operationId: 'discardRuleSetDraft',
  summary: 'Discard the draft (the live version is untouched)',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  success: { status: 204, description: 'Discarded' },
  handler: async ({ account, params, principal, services }) => {
    await services.store.ruleSets.discardDraft(account.id, params.event_type, { actor: principal.actor });
  },
});

const ruleExample = { library: 'email_free_provider', score: 5, mode: 'dry_run' } as const;

export const addDraftRule = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets/:event_type/draft/rules', tag: 'rules', operationId: 'addDraftRule',
  summary: 'Add a rule to the draft: a library rule by id, or a custom rule with its condition',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: z.object({
    rule: ruleSchema,
    position: z.number().int().min(0).optional().describe('Where in the list (rules are evaluated and reported in order); the end by default'),
    comment: comment.optional(),
  }),
  example: { rule: { id: 'sanctioned_country', name: 'Country under sanctions', score: 50, when: { field: 'ip.country_code', in: ['KP', 'IR'] } }, comment: 'Decline sanctioned countries' },
  success: { status: 201, description: 'The draft as it is now', schema: versionView, example: draftExample },
  problems: { 409: 'The draft already has a rule with this id' },
  handler: async (ctx) => editDraft(ctx, (data) => {
    const rules = rulesOf(data);
    const key = ruleKey(ctx.body.rule)!;
    if (rules.some((r) => ruleKey(r) === key)) throw new StoreRequestError('conflict', `the draft already has rule "${key}"`);
    rules.splice(Math.min(ctx.body.position ?? rules.length, rules.length), 0, ruleAsSent(ctx.request));
    return { ...data, rules };
  }),
});

const ruleParams = eventTypeParams.extend({ rule_id: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a rule id') });

export const replaceDraftRule = adminRoute({
  method: 'PUT', url: '/accounts/:account/rule-sets/:event_type/draft/rules/:rule_id', tag: 'rules', operationId: 'replaceDraftRule',
  summary: 'Change one rule of the draft: its score, mode, condition or name, in its place',
  access: { role: 'admin', account: true },
  params: ruleParams,
  body: z.object({ rule: ruleSchema, comment: comment.optional() }),
  example: { rule: ruleExample, comment: 'Watch free providers' },
  success: { status: 200, description: 'The draft as it is now', schema: versionView, example: draftExample },
  handler: async (ctx) => editDraft(ctx, (data) => {
    const rules = rulesOf(data);
    const i = indexOfRule(rules, ctx.params.rule_id);
    rules[i] = ruleAsSent(ctx.request);
    return { ...data, rules };
  }),
});

export const removeDraftRule = adminRoute({
  method: 'DELETE', url: '/accounts/:account/rule-sets/:event_type/draft/rules/:rule_id', tag: 'rules', operationId: 'removeDraftRule',
  summary: 'Remove one rule from the draft',
  access: { role: 'admin', account: true },
  params: ruleParams,
  success: { status: 200, description: 'The draft as it is now', schema: versionView, example: draftExample },
  handler: async (ctx) => editDraft({ ...ctx, body: {} }, (data) => {
    const rules = rulesOf(data);
    rules.splice(indexOfRule(rules, ctx.params.rule_id), 1);
    return { ...data, rules };
  }),
});

/** The draft's thresholds: review from `review`, decline from `decline`, refined with `inOrder` and `notInOrder`. */
const thresholdFields = { review: z.number().int().min(0).max(100), decline: z.number().int().min(0).max(100) };
const inOrder = (t: { review: number; decline: number }) => t.review <= t.decline;
const notInOrder = { message: 'review must not be above decline', path: ['review'] };

export const setDraftThresholds = adminRoute({
  method: 'PUT', url: '/accounts/:account/rule-sets/:event_type/draft/thresholds', tag: 'rules', operationId: 'setDraftThresholds',
  summary: 'Set the draft\'s thresholds: review from `review`, decline from `decline` (half-open bands)',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: z.object({ ...thresholdFields, comment: comment.optional() }).refine(inOrder, notInOrder),
  example: { review: 25, decline: 50 },
  success: { status: 200, description: 'The draft as it is now', schema: versionView, example: draftExample },
  handler: async (ctx) => editDraft(ctx, (data) => ({ ...data, thresholds: { review: ctx.body.review, decline: ctx.body.decline } })),
});

const ruleId = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a rule id');

export const editDraftRules = adminRoute({
  method: 'PATCH', url: '/accounts/:account/rule-sets/:event_type/draft', tag: 'rules', operationId: 'editRuleSetDraft',
  summary: 'Change several rules of the draft and its thresholds in one edit (the console\'s one Save)',
  description: 'Each rule in `rules` (by id: a library rule\'s id, a custom rule\'s id) replaces the one of that id in its place; `thresholds` replace the thresholds. One draft version, all or nothing: a problem with any of them refuses the whole edit, naming `rules.<rule_id>.<field>`. Unlike saving the whole draft, this does not make a draft that something was published over publishable. Send `yaml_sha256` of the text the edits were made on to be refused with 409 if it changed since.',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: z.object({
    rules: z.record(ruleId, ruleSchema).optional().meta({ description: 'Rules as they should be written, by id' }),
    thresholds: z.object(thresholdFields).refine(inOrder, notInOrder).optional(),
    yaml_sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits').optional()
      .meta({ description: 'SHA-256 of the draft (or, with no draft, the live version) the edits were made on' }),
    comment: comment.optional(),
  }),
  example: { rules: { ip_tor: { library: 'ip_tor', score: 50 }, email_disposable: { library: 'email_disposable', score: 35 } }, thresholds: { review: 25, decline: 50 }, yaml_sha256: sha256('rules: []\n') },
  success: { status: 200, description: 'The draft as it is now', schema: versionView, example: draftExample },
  problems: { 404: 'No rule of one of these ids in the draft', 409: 'The draft changed since `yaml_sha256` was read' },
  handler: async (ctx) => editDraft(ctx, (data, base) => {
    if (ctx.body.yaml_sha256 !== undefined && sha256(base.yaml) !== ctx.body.yaml_sha256) {
      throw new StoreRequestError('conflict', `the draft of ${ctx.params.event_type} changed since it was read (its yaml_sha256 differs): review it again`);
    }
    const rules = rulesOf(data);
    // As sent, not as parsed: what the schema fills in is not written into the file.
    const sent = (ctx.request.body as { rules?: Record<string, unknown> }).rules ?? {};
    for (const [id, rule] of Object.entries(sent)) rules[indexOfRule(rules, id)] = rule;
    return { ...data, rules, ...(ctx.body.thresholds ? { thresholds: ctx.body.thresholds } : {}) };
  }),
});

function rulesOf(data: RuleFileData): unknown[] {
  return Array.isArray(data.rules) ? [...(data.rules as unknown[])] : [];
}

function indexOfRule(rules: unknown[], id: string): number {
  const i = rules.findIndex((r) => ruleKey(r) === id);
  if (i < 0) throw new StoreRequestError('not_found', `the draft has no rule "${id}"`);
  return i;
}

/** The rule as the client wrote it (validated by the schema; nothing filled in). */
const ruleAsSent = (request: { body: unknown }) => (request.body as { rule: unknown }).rule;

export const validateRuleSet = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets/:event_type/validate', tag: 'rules', operationId: 'validateRuleSet',
  summary: 'Validate a rule set without saving it, as YAML or as data',
  description: 'The same validation as saving a draft, importing a file or `npm run rules:check`: a 400 problem lists every problem with its path (and line and column for YAML). Valid, it answers the rules as they would take effect and the YAML that would be stored.',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  body: ruleSetBody,
  example: { yaml: 'rules:\n  - library: ip_tor\n    score: 50\n' },
  success: {
    status: 200, description: 'Valid',
    schema: ruleSetContent.extend({ valid: z.literal(true), yaml: z.string().meta({ description: 'The text that would be stored' }) }),
    example: { valid: true, thresholds: { review: 20, decline: 40 }, rules: [versionExample.rules[1]!], yaml: 'rules:\n  - library: ip_tor\n    score: 50\n' },
  },
  handler: async ({ account, params, body, request, services }) => {
    const base = await services.store.ruleSets.inStatus(account.id, params.event_type, 'draft') ?? await services.store.ruleSets.inStatus(account.id, params.event_type, 'published');
    const yaml = textOf(body, base?.yaml ?? null, request);
    const found = ruleFileProblems(account.id, { eventType: params.event_type, yaml });
    if (found.length > 0) throw new RuleSetError(found);
    const { thresholds, rules } = contentOf(account.id, params.event_type, yaml);
    return { valid: true as const, thresholds, rules, yaml };
  },
});

const dryRunRequest = evaluationRequestSchema.extend({ event_type: z.string().optional().meta({ description: 'Ignored: the path\'s event type is evaluated' }) });

export const dryRunRuleSet = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets/:event_type/dry-run', tag: 'rules', operationId: 'dryRunRuleSet',
  summary: 'Dry run: score one request with the draft (or a version, or an unsaved text), with the real enrichment, recording nothing',
  description: 'The request is enriched as `POST /v1/risk/evaluate` would enrich it (DNS, IP data, lists; behaviour history is neither read nor recorded, so behaviour rules are unknown), then scored by the chosen rule set with each rule\'s outcome and the facts it read; the live version\'s score is given beside it. Nothing is logged or counted.',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  body: z.object({
    request: dryRunRequest,
    version: z.union([z.enum(['draft', 'published']), versionNumber]).optional().describe('The version to score with; the draft by default, else the live version'),
    yaml: ruleFileText.optional().describe('An unsaved rule file to score with instead'),
    rule_set: ruleFileSchema.optional().describe('An unsaved rule file, as data, to score with instead'),
  }).refine((b) => [b.version, b.yaml, b.rule_set].filter((x) => x !== undefined).length <= 1, { message: 'send at most one of version, yaml and rule_set' }),
  example: { request: { ip: '185.220.101.4', email: 'jane.doe@mailinator.com' }, version: 'draft' },
  success: {
    status: 200, description: 'What the rule set would answer, and why',
    schema: z.object({
      event_type: z.string(),
      version: versionSummary.nullable().meta({ description: 'The version scored with; null for an unsaved text' }),
      score: z.object({ details: z.array(scoreDetail), fraud_score: z.number(), state: z.enum(['approve', 'review', 'decline']) }),
      dry_run: z.array(scoreDetail),
      signals: z.array(z.string()),
      rules: z.array(explanation),
      unavailable: z.array(z.string()).meta({ description: 'Checks that could not run, then rules whose input was unknown (`rule:<id>`), as the response would say' }),
      email: emailFactsSchema,
      ip: ipFactsSchema,
      live: z.object({ version: z.number().int(), fraud_score: z.number(), state: z.enum(['approve', 'review', 'decline']), details: z.array(scoreDetail) }).nullable()
        .meta({ description: 'What the live version answers for the same facts' }),
    }),
    example: dryRunExample(),
  },
  handler: async ({ account, params, body, request, services, now }) => {
    const validated = validateEvaluationRequest({ ...body.request, event_type: params.event_type });
    if (!validated.ok) throw problems.invalidRequest(validated.errors.map((e) => ({ ...e, path: `request.${e.path}` })));
    const live = await services.store.ruleSets.inStatus(account.id, params.event_type, 'published');
    let chosen: { version: RuleSetVersionWithText | null; yaml: string };
    if (body.yaml !== undefined || body.rule_set !== undefined) {
      chosen = { version: null, yaml: textOf(body as z.infer<typeof ruleSetBody>, live?.yaml ?? null, request) };
    } else {
      const ref = body.version ?? 'draft';
      const found = typeof ref === 'number' ? await services.store.ruleSets.get(account.id, params.event_type, ref)
        : await services.store.ruleSets.inStatus(account.id, params.event_type, ref) ?? (body.version === undefined ? live : undefined);
      if (!found) throw problems.resourceNotFound(`${params.event_type} has no ${typeof ref === 'number' ? `version ${ref}` : `${ref} version`}`);
      chosen = { version: found, yaml: found.yaml };
    }
    const ruleSet = compiled(account.id, params.event_type, chosen.yaml);
    // Recording nothing: the history is not read either, so behaviour rules are unknown in a dry run.
    const context = await services.enrich(validated.value, account.id, now, false);
    const { outcome, rules } = explainRuleSet(context, ruleSet);
    const liveOutcome = live ? explainRuleSet(context, compiled(account.id, params.event_type, live.yaml)).outcome : null;
    return {
      event_type: params.event_type,
      version: chosen.version ? summaryOf(chosen.version) : null,
      score: { details: outcome.details, fraud_score: outcome.fraud_score, state: outcome.state },
      dry_run: outcome.dry_run,
      signals: outcome.signals,
      rules,
      unavailable: [...context.unavailable, ...outcome.unavailable],
      email: context.email,
      ip: context.ip,
      live: live && liveOutcome ? { version: live.version, fraud_score: liveOutcome.fraud_score, state: liveOutcome.state, details: liveOutcome.details } : null,
    };
  },
});

function compiled(account: string, eventType: string, yaml: string): RuleSet {
  const parsed = parseRuleFile(eventType, ruleSetLabel(account, eventType), yaml);
  if ('problems' in parsed) throw new RuleSetError(parsed.problems);
  return parsed.ruleSet;
}

function dryRunExample() {
  const detail = { rule_id: 'ip_tor', rule_name: 'IP address is a Tor exit node', rule_type: 'static' as const, score: 50 };
  return {
    event_type: 'account_register',
    version: { version: 4, status: 'draft' as const, author: 'user:usr_4f1c2a9b0d3e5f67', comment: 'Tor to 50', created_at: '2026-11-21T12:00:00.000Z', published_at: null },
    score: { details: [detail], fraud_score: 50, state: 'decline' as const },
    dry_run: [],
    signals: ['ip_tor'],
    rules: [
      { id: 'email_disposable', name: 'Email address is disposable', score: 40, mode: 'live' as const, outcome: 'unknown' as const, evidence: [{ field: 'email.disposable', value: null, reading: 'unknown' as const, unavailable: 'email.disposable' }] },
      { id: 'ip_tor', name: 'IP address is a Tor exit node', score: 50, mode: 'live' as const, outcome: 'fired' as const, evidence: [{ field: 'ip.is_tor', value: true, reading: 'value' as const, unavailable: null }] },
    ],
    unavailable: ['email.mx', 'email.disposable', 'rule:email_disposable'],
    email: {
      address: 'jane.doe@mailinator.com', normalized: 'jane.doe@mailinator.com', domain: 'mailinator.com', canonical: 'jane.doe@mailinator.com', deliverable: null,
      deliverability: 'unknown' as const, mx_records: null, disposable: null, free_provider: false, role_account: false, relay: false, suggested_domain: null,
    },
    ip: {
      address: '185.220.101.4', version: 4 as const, embedded_ipv4: null, transition: null, country_code: 'DE', country: 'Germany', region: null, city: null, postal_code: null,
      latitude: null, longitude: null, accuracy_radius_km: null, time_zone: null, asn: 60729, as_organization: 'Stiftung Erneuerbare Freiheit', is_tor: true, is_proxy: false,
      is_datacenter: true, is_vpn: false, is_bogon: false,
    },
    live: { version: 3, fraud_score: 40, state: 'decline' as const, details: [{ ...detail, score: 40 }] },
  };
}

export const publishRuleSetDraft = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets/:event_type/publish', tag: 'rules', operationId: 'publishRuleSetDraft',
  summary: 'Publish the draft, with a comment',
  description: 'One transaction: the draft becomes the live version and the one it replaces is archived. Every replica serves it within RELOAD_INTERVAL_MS (this one at once). Send `yaml_sha256` (from the draft you reviewed) to be refused with 409 if the draft changed since.',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: z.object({ comment, yaml_sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits').optional() }),
  example: { comment: 'Tor to 50: three weeks of dry run, no real users hit' },
  success: { status: 200, description: 'The new live version', schema: versionView, example: { ...versionExample, version: 4, comment: 'Tor to 50: three weeks of dry run, no real users hit' } },
  problems: { 409: 'The draft changed since `yaml_sha256` was read, or a newer version was published while it waited (save it again after reviewing the diff)' },
  handler: async (ctx) => {
    const { account, params, body, principal, services } = ctx;
    const draft = await services.store.ruleSets.inStatus(account.id, params.event_type, 'draft');
    if (!draft) throw problems.resourceNotFound(`${params.event_type} has no draft to publish`);
    return published(ctx, await services.store.ruleSets.publish(account.id, params.event_type, draft.version, { actor: principal.actor, comment: body.comment, expectedSha256: body.yaml_sha256 }));
  },
});

export const ruleDraftRoutes = [saveRuleSetDraft, discardRuleSetDraft, addDraftRule, replaceDraftRule, removeDraftRule, setDraftThresholds, editDraftRules, validateRuleSet, dryRunRuleSet, publishRuleSetDraft];
