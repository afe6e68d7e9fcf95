import { z } from 'zod';
import { problems } from '../../http/problem.js';
import { diffRuleSets } from '../../rules/diff.js';
import { StoreRequestError } from '../../store/errors.js';
import type { RuleSetVersionWithText } from '../../store/rule-sets.js';
import type { Store } from '../../store/index.js';
import { adminRoute, type AdminContext } from '../route.js';
import { accountParams } from '../schemas.js';
import {
  comment, contentOf, eventType, eventTypeParams, summaryOf, versionExample, versionNumber, versionSummary, versionView, versionViewOf,
} from '../rule-views.js';

/**
 * Rule sets per event type (spec §1.5, PRODUCT.md "Rules"): what is live and drafted, the version
 * history and a diff between two versions, adding an event type, rolling back. Drafts are edited
 * in rule-drafts.ts; YAML files come and go in rule-files.ts. Every write is audited by the store in
 * its own transaction, and what it publishes reaches every replica through the change counter
 * within RELOAD_INTERVAL_MS (this one at once).
 */

const summaryExample = { version: 3, status: 'published' as const, author: 'user:usr_4f1c2a9b0d3e5f67', comment: 'Decline sanctioned countries', created_at: '2026-11-21T12:00:00.000Z', published_at: '2026-11-21T12:05:00.000Z' };

export const listRuleSets = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets', tag: 'rules', operationId: 'listRuleSets',
  summary: 'The account\'s event types, each with its live version and its draft',
  access: { role: 'analyst', account: true },
  params: accountParams,
  success: {
    status: 200, description: 'One entry per event type, by name',
    schema: z.object({ rule_sets: z.array(z.object({ event_type: eventType, published: versionSummary.nullable(), draft: versionSummary.nullable() })) }),
    example: { rule_sets: [{ event_type: 'account_register', published: summaryExample, draft: { ...summaryExample, version: 4, status: 'draft', comment: 'Tor to 50', published_at: null } }] },
  },
  handler: async ({ account, services }) => {
    const byType = new Map<string, { event_type: string; published: ReturnType<typeof summaryOf> | null; draft: ReturnType<typeof summaryOf> | null }>();
    for (const v of await services.store.ruleSets.current(account.id)) {
      const entry = byType.get(v.event_type) ?? { event_type: v.event_type, published: null, draft: null };
      entry[v.status === 'draft' ? 'draft' : 'published'] = summaryOf(v);
      byType.set(v.event_type, entry);
    }
    return { rule_sets: [...byType.values()] };
  },
});

const startFrom = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('default'), event_type: eventType.optional().describe('The shipped rule set (RULES_DIR) to start from; defaults to the new event type\'s own') }),
  z.object({ kind: z.literal('copy'), event_type: eventType.describe('Another event type of this account: its live version is copied') }),
  z.object({ kind: z.literal('empty') }),
]);

export const createRuleSet = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets', tag: 'rules', operationId: 'createRuleSet',
  summary: 'Add an event type: from the shipped default, a copy of another, or empty',
  description: 'Its version 1 is published at once: `POST /v1/risk/evaluate` accepts the event type from the next reload (every replica within RELOAD_INTERVAL_MS).',
  access: { role: 'admin', account: true },
  params: accountParams,
  body: z.object({ event_type: eventType, from: startFrom, comment: comment.optional() }),
  example: { event_type: 'checkout', from: { kind: 'copy', event_type: 'account_login' }, comment: 'Checkout starts like login' },
  success: { status: 201, description: 'The new event type\'s first version, published', schema: versionView, example: { ...versionExample, version: 1, event_type: 'checkout' } },
  problems: { 409: 'The account already has a rule set for this event type' },
  handler: async ({ account, body, principal, services }) => {
    const yaml = await startingText(services.store, services.seed.files, account.id, body.event_type, body.from);
    const created = await services.store.ruleSets.create(account.id, { eventType: body.event_type, yaml }, { actor: principal.actor, comment: body.comment ?? `created from ${body.from.kind === 'empty' ? 'nothing' : `${body.from.kind} ${body.from.event_type ?? body.event_type}`}` });
    await services.reloadConfiguration();
    return versionViewOf({ ...created, yaml });
  },
});

async function startingText(store: Store, shipped: Array<{ eventType: string; yaml: string }>, account: string, newType: string, from: z.infer<typeof startFrom>): Promise<string> {
  switch (from.kind) {
    case 'empty':
      return `description: Risk rules for ${newType}.\nrules: []\n`;
    case 'default': {
      const name = from.event_type ?? newType;
      const file = shipped.find((f) => f.eventType === name);
      if (file === undefined) throw problems.invalidRequest([{ path: 'from.event_type', message: `no shipped rule set "${name}"; one of: ${shipped.map((f) => f.eventType).join(', ')}` }]);
      return file.yaml;
    }
    case 'copy': {
      const live = await store.ruleSets.inStatus(account, from.event_type, 'published');
      if (live === undefined) throw problems.invalidRequest([{ path: 'from.event_type', message: `the account has no live rule set for ${from.event_type}` }]);
      return live.yaml;
    }
  }
}

export const getRuleSet = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type', tag: 'rules', operationId: 'getRuleSet',
  summary: 'An event type\'s live version and its draft: YAML and a structured view',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  success: {
    status: 200, description: 'The live version and the draft (null when there is none)',
    schema: z.object({ event_type: eventType, published: versionView.nullable(), draft: versionView.nullable() }),
    example: { event_type: 'account_register', published: versionExample, draft: null },
  },
  handler: async ({ account, params, services }) => {
    const [published, draft] = await Promise.all(['published', 'draft'].map((s) => services.store.ruleSets.inStatus(account.id, params.event_type, s as 'published' | 'draft')));
    if (!published && !draft) throw problems.resourceNotFound(`no rule set for ${params.event_type}`);
    return { event_type: params.event_type, published: published ? versionViewOf(published) : null, draft: draft ? versionViewOf(draft) : null };
  },
});

export const listRuleSetVersions = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/versions', tag: 'rules', operationId: 'listRuleSetVersions',
  summary: 'The version history: number, status, author, time, comment; newest first',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  query: z.object({
    before: versionNumber.optional().describe('Cursor: versions older than this one (the `next_before` of the previous page)'),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  }),
  success: {
    status: 200, description: 'A page of versions',
    schema: z.object({ versions: z.array(versionSummary), next_before: z.number().int().nullable().meta({ description: 'Pass as `before` for the next page; null on the last' }) }),
    example: { versions: [summaryExample, { ...summaryExample, version: 2, status: 'archived', comment: 'Tor to 40' }], next_before: null },
  },
  handler: async ({ account, params, query, services }) => {
    const rows = await services.store.ruleSets.list(account.id, params.event_type, { beforeVersion: query.before, limit: query.limit + 1 });
    if (rows.length === 0 && query.before === undefined) throw problems.resourceNotFound(`no rule set for ${params.event_type}`);
    const page = rows.slice(0, query.limit);
    return { versions: page.map(summaryOf), next_before: rows.length > query.limit ? page.at(-1)!.version : null };
  },
});

export const getRuleSetVersion = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/versions/:version', tag: 'rules', operationId: 'getRuleSetVersion',
  summary: 'One version: YAML and a structured view',
  access: { role: 'analyst', account: true },
  params: eventTypeParams.extend({ version: versionNumber }),
  success: { status: 200, description: 'The version', schema: versionView, example: versionExample },
  handler: async ({ account, params, services }) => versionViewOf(await requireVersion(services.store, account.id, params.event_type, params.version)),
});

const versionRef = z.union([z.enum(['published', 'draft']), versionNumber]);

async function requireVersion(store: Store, account: string, eventType: string, ref: z.infer<typeof versionRef>): Promise<RuleSetVersionWithText> {
  const found = typeof ref === 'number' ? await store.ruleSets.get(account, eventType, ref) : await store.ruleSets.inStatus(account, eventType, ref);
  if (!found) throw problems.resourceNotFound(typeof ref === 'number' ? `${eventType} has no version ${ref}` : `${eventType} has no ${ref} version`);
  return found;
}

const ruleChange = z.object({ id: z.string(), changes: z.array(z.object({ property: z.string(), from: z.unknown(), to: z.unknown() })) });
const ruleInfoList = versionView.shape.rules;

export const diffRuleSetVersions = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/diff', tag: 'rules', operationId: 'diffRuleSetVersions',
  summary: 'What changed between two versions: rules added, removed and changed, thresholds, and a diff of the YAML',
  description: '`from` and `to` are version numbers, `published` or `draft`; by default the live version against the draft (what publishing would change).',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  query: z.object({ from: versionRef.default('published'), to: versionRef.default('draft') }),
  success: {
    status: 200, description: 'The difference, from `from` to `to`',
    schema: z.object({
      from: versionSummary, to: versionSummary,
      thresholds: z.object({ from: z.object({ review: z.number(), decline: z.number() }), to: z.object({ review: z.number(), decline: z.number() }) }).nullable().meta({ description: 'null when unchanged' }),
      rules: z.object({ added: ruleInfoList, removed: ruleInfoList, changed: z.array(ruleChange), reordered: z.boolean() }),
      text: z.string().meta({ description: 'A unified diff of the two YAML texts; empty when they are the same' }),
    }),
    example: {
      from: summaryExample, to: { ...summaryExample, version: 4, status: 'draft', comment: 'Tor to 50', published_at: null },
      thresholds: null,
      rules: { added: [], removed: [], changed: [{ id: 'ip_tor', changes: [{ property: 'score', from: 40, to: 50 }] }], reordered: false },
      text: '===================================================================\n--- account_register.yaml (v3)\n+++ account_register.yaml (v4)\n@@ -3,5 +3,5 @@\n   - library: email_disposable\n     score: 40\n   - library: ip_tor\n-    score: 40\n+    score: 50\n',
    },
  },
  handler: async ({ account, params, query, services }) => {
    const [from, to] = await Promise.all([query.from, query.to].map((ref) => requireVersion(services.store, account.id, params.event_type, ref)));
    const side = (v: RuleSetVersionWithText) => {
      const content = contentOf(account.id, v.event_type, v.yaml, v.version);
      if (content.thresholds === null) throw problems.conflict(`version ${v.version} of ${v.event_type} no longer validates: ${content.problems[0]!.message}`);
      return { label: `${v.event_type}.yaml (v${v.version})`, yaml: v.yaml, info: { thresholds: content.thresholds, rules: content.rules } };
    };
    return { from: summaryOf(from!), to: summaryOf(to!), ...diffRuleSets(side(from!), side(to!)) };
  },
});

export const rollbackRuleSet = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-sets/:event_type/rollback', tag: 'rules', operationId: 'rollbackRuleSet',
  summary: 'Roll back: publish an earlier version\'s text again, as a new version',
  description: 'History only grows: the evaluations each version decided keep pointing at it. The draft, if any, stays.',
  access: { role: 'admin', account: true },
  params: eventTypeParams,
  body: z.object({ version: versionNumber, comment: comment.optional().describe('Defaults to "rollback to version N"') }),
  example: { version: 2, comment: 'Tor at 50 declined real users' },
  success: { status: 200, description: 'The new live version', schema: versionView, example: { ...versionExample, version: 5, comment: 'Tor at 50 declined real users' } },
  problems: { 409: 'That version is the live one' },
  handler: async (ctx) => published(ctx, await ctx.services.store.ruleSets.rollback(ctx.account.id, ctx.params.event_type, ctx.body.version, { actor: ctx.principal.actor, comment: ctx.body.comment ?? null })),
});

/** After a change of what is live: this replica serves it at once, and answers with it. */
export async function published(ctx: AdminContext<{ event_type: string }, unknown, unknown>, version: { version: number }) {
  await ctx.services.reloadConfiguration();
  const stored = await ctx.services.store.ruleSets.get(ctx.account.id, ctx.params.event_type, version.version);
  if (!stored) throw new StoreRequestError('not_found', `${ctx.params.event_type} has no version ${version.version}`);
  return versionViewOf(stored);
}

export const ruleSetRoutes = [listRuleSets, createRuleSet, getRuleSet, listRuleSetVersions, getRuleSetVersion, diffRuleSetVersions, rollbackRuleSet];
