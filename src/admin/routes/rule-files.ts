import { z } from 'zod';
import { FILE_CAPS } from '../../files/caps.js';
import { RuleSetError } from '../../rules/rule-file.js';
import { ruleFileProblems } from '../../store/rule-sets.js';
import { adminRoute } from '../route.js';
import { accountParams } from '../schemas.js';
import { comment, eventType } from '../rule-views.js';

/**
 * Rule files, the exchange format (PRODUCT.md "Rules"): a team keeps them in version control and
 * applies them from its CI; the console imports one file or a directory's. The same validation and
 * the same all-or-none as `npm run rules -- apply DIR`; every problem of every file is reported at once.
 */
const ruleFile = z.object({
  event_type: eventType.describe('The file\'s event type (`account_register.yaml` holds `account_register`)'),
  yaml: z.string().max(FILE_CAPS.ruleFile).meta({ description: 'The rule file, at most 32 KiB' }),
});

const MAX_FILES = 50;

export const importRuleFiles = adminRoute({
  method: 'POST', url: '/accounts/:account/rule-files', tag: 'rules', operationId: 'importRuleFiles',
  summary: 'Import rule files (one, or a directory\'s): publish each that changed, or save each as its event type\'s draft',
  description: 'All files or none; at most 50 files and 1 MiB of JSON. With `publish` (the default) a file whose text is the live one is left alone, and a new event type is added. Problems name the file, the path in it, the line and the column.',
  access: { role: 'admin', account: true },
  params: accountParams,
  body: z.object({
    files: z.array(ruleFile).min(1).max(MAX_FILES)
      .refine((files) => new Set(files.map((f) => f.event_type)).size === files.length, { message: 'each event type at most once' }),
    publish: z.boolean().default(true).describe('false: save each file as its event type\'s draft, to review and publish later'),
    comment: comment.optional(),
  }),
  example: { files: [{ event_type: 'account_register', yaml: 'rules:\n  - library: email_disposable\n  - library: ip_tor\n    score: 50\n' }], comment: 'From rules repository commit 4f1c2a9' },
  success: {
    status: 200, description: 'What became of each file',
    schema: z.object({ files: z.array(z.object({ event_type: eventType, version: z.number().int(), outcome: z.enum(['published', 'unchanged', 'draft']) })) }),
    example: { files: [{ event_type: 'account_register', version: 4, outcome: 'published' }] },
  },
  handler: async ({ account, body, principal, services }) => {
    const files = body.files.map((f) => ({ eventType: f.event_type, yaml: f.yaml }));
    const found = files.flatMap((file) => ruleFileProblems(account.id, file));
    if (found.length > 0) throw new RuleSetError(found);
    const by = { actor: principal.actor, comment: body.comment ?? null };
    if (!body.publish) {
      const drafts = await services.store.ruleSets.saveDrafts(account.id, files, by);
      return { files: drafts.map((d) => ({ event_type: d.event_type, version: d.version, outcome: 'draft' as const })) };
    }
    const results = await services.store.ruleSets.apply(account.id, files, by);
    await services.reloadConfiguration();
    return { files: results.map((r) => ({ event_type: r.eventType, version: r.version, outcome: r.outcome })) };
  },
});

export const exportRuleFiles = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-files', tag: 'rules', operationId: 'exportRuleFiles',
  summary: 'Export the live rule files (all event types, or one)',
  description: 'Each file is its live version\'s text exactly as stored; write each to `<event_type>.yaml` (`npm run rules -- export DIR` does).',
  access: { role: 'analyst', account: true },
  params: accountParams,
  query: z.object({ event_type: eventType.optional() }),
  success: {
    status: 200, description: 'The live files, by event type',
    schema: z.object({ files: z.array(ruleFile.extend({ version: z.number().int() })) }),
    example: { files: [{ event_type: 'account_register', version: 4, yaml: 'rules:\n  - library: email_disposable\n  - library: ip_tor\n    score: 50\n' }] },
  },
  handler: async ({ account, query, services }) => {
    const live = await services.store.ruleSets.published(account.id);
    return { files: live.filter((v) => query.event_type === undefined || v.event_type === query.event_type).map((v) => ({ event_type: v.event_type, version: v.version, yaml: v.yaml })) };
  },
});

export const ruleFileRoutes = [importRuleFiles, exportRuleFiles];
