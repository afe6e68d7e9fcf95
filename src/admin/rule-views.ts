import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ruleSetInfo } from '../rules/catalogue.js';
import { ruleFileData } from '../rules/edit.js';
import { conditionSchema, MODES, ruleFileSchema } from '../rules/file-schema.js';
import { parseRuleFile } from '../rules/rule-file.js';
import { EVENT_TYPE, type RuleSetVersion, type RuleSetVersionWithText } from '../store/rule-sets.js';
import { ruleSetLabel } from '../rules/rule-file.js';
import { accountParams, iso, isoOrNull, time } from './schemas.js';

/** Schemas and views shared by the rule set routes: a version as the console shows it, a rule as it takes effect. */

export const eventType = z.string().regex(EVENT_TYPE, '1 to 64 letters, digits, _ or -').meta({ example: 'account_register' });
export const eventTypeParams = accountParams.extend({ event_type: eventType });
export const versionNumber = z.coerce.number().int().min(1).meta({ example: 3 });
/** A comment for the version history. */
export const comment = z.string().trim().min(1).max(500);

export const versionSummary = z.object({
  version: z.number().int(),
  status: z.enum(['draft', 'published', 'archived']),
  author: z.string().meta({ description: 'Who made it: `user:usr_…`, `token:tok_…`, `cli:…`, `system`' }),
  comment: z.string().nullable(),
  created_at: time.describe('When it was made (for a draft: last changed)'),
  published_at: time.nullable(),
});

export const summaryOf = (v: RuleSetVersion) => ({
  version: v.version, status: v.status, author: v.author, comment: v.comment, created_at: iso(v.created_at), published_at: isoOrNull(v.published_at),
});

const ruleInfo = z.object({
  id: z.string().meta({ description: 'The library id or the custom rule\'s id' }),
  kind: z.enum(['library', 'custom']),
  name: z.string().meta({ description: 'The name the response shows in score.details' }),
  description: z.string().nullable(),
  score: z.number().int(),
  default_score: z.number().int().nullable().meta({ description: 'The library rule\'s own score; null for a custom rule' }),
  mode: z.enum(MODES),
  reads: z.array(z.string()).meta({ description: 'The fields its condition reads' }),
  when: conditionSchema.nullable().meta({ description: 'A custom rule\'s condition, as written' }),
});

const thresholds = z.object({ review: z.number().int(), decline: z.number().int() });

export const fileProblem = z.object({ path: z.string(), message: z.string(), line: z.number().int().nullable(), column: z.number().int().nullable() });

export const ruleSetContent = z.object({
  thresholds: thresholds.nullable().meta({ description: 'As they take effect (defaults filled in); null when the text does not validate' }),
  rules: z.array(ruleInfo).meta({ description: 'In the file\'s order, as they take effect' }),
});

export const versionView = versionSummary.extend({
  event_type: eventType,
  yaml: z.string().meta({ description: 'The rule file, exactly as stored' }),
  yaml_sha256: z.string().meta({ description: 'SHA-256 of `yaml` (hex): send it back when publishing to publish only what you reviewed' }),
  rule_set: ruleFileSchema.nullable().meta({ description: 'The file as data, as written (the body `PUT …/draft` takes as `rule_set`); null when it does not parse' }),
  ...ruleSetContent.shape,
  problems: z.array(fileProblem).meta({ description: 'Why a stored text no longer validates (after an upgrade that tightened validation); empty otherwise' }),
});
export type VersionView = z.infer<typeof versionView>;

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A stored text's rules as they take effect, or its problems. */
export function contentOf(account: string, eventType: string, yaml: string, version?: number) {
  const parsed = parseRuleFile(eventType, ruleSetLabel(account, eventType, version), yaml);
  if ('problems' in parsed) return { thresholds: null, rules: [], problems: parsed.problems.map(({ path, message, line, column }) => ({ path, message, line, column })) };
  return { ...ruleSetInfo(parsed.data, parsed.ruleSet), problems: [] };
}

export function versionViewOf(v: RuleSetVersionWithText): VersionView {
  const content = contentOf(v.account_id, v.event_type, v.yaml, v.version);
  return {
    ...summaryOf(v), event_type: v.event_type, yaml: v.yaml, yaml_sha256: sha256(v.yaml),
    rule_set: content.problems.length === 0 ? (ruleFileData(v.yaml) as VersionView['rule_set']) : null,
    ...content,
  };
}

export const VERSION_EXAMPLE_YAML = 'description: Risk rules for account_register (new sign-ups).\nrules:\n  - library: email_disposable\n    score: 40\n  - library: ip_tor\n    score: 40\n  - id: sanctioned_country\n    name: Country under sanctions\n    score: 50\n    when: { field: ip.country_code, in: [KP, IR] }\n';

export const versionExample: VersionView = {
  version: 3, status: 'published', author: 'user:usr_4f1c2a9b0d3e5f67', comment: 'Decline sanctioned countries',
  created_at: '2026-11-21T12:00:00.000Z', published_at: '2026-11-21T12:05:00.000Z', event_type: 'account_register',
  yaml: VERSION_EXAMPLE_YAML, yaml_sha256: sha256(VERSION_EXAMPLE_YAML),
  rule_set: {
    description: 'Risk rules for account_register (new sign-ups).',
    rules: [
      { library: 'email_disposable', score: 40 }, { library: 'ip_tor', score: 40 },
      { id: 'sanctioned_country', name: 'Country under sanctions', score: 50, when: { field: 'ip.country_code', in: ['KP', 'IR'] } },
    ],
  },
  thresholds: { review: 20, decline: 40 },
  rules: [
    { id: 'email_disposable', kind: 'library', name: 'Email address is disposable', description: 'The domain hands out throw-away addresses, the usual tool for fake and repeat sign-ups.', score: 40, default_score: 40, mode: 'live', reads: ['email.disposable'], when: null },
    { id: 'ip_tor', kind: 'library', name: 'IP address is a Tor exit node', description: 'Traffic leaves the Tor network here: anonymous by design, and common in abuse.', score: 40, default_score: 40, mode: 'live', reads: ['ip.is_tor'], when: null },
    { id: 'sanctioned_country', kind: 'custom', name: 'Country under sanctions', description: null, score: 50, default_score: null, mode: 'live', reads: ['ip.country_code'], when: { field: 'ip.country_code', in: ['KP', 'IR'] } },
  ],
  problems: [],
};
