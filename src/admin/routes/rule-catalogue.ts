import { z } from 'zod';
import { fieldCatalogue, libraryCatalogue, velocityCatalogue } from '../../rules/catalogue.js';
import { ruleFileData } from '../../rules/edit.js';
import { OPERATORS } from '../../rules/file-schema.js';
import { adminRoute } from '../route.js';
import { accountParams } from '../schemas.js';

/**
 * What the rule editor offers, read from the code that evaluates rules (src/rules), so the console
 * cannot drift from it: the library of built-in rules, and every field a custom condition can read.
 */
const libraryRule = z.object({
  id: z.string(),
  name: z.string().meta({ description: 'The name the response shows in score.details' }),
  description: z.string(),
  default_score: z.number().int(),
  reads: z.string().meta({ description: 'The field it reads (see the field catalogue)' }),
  fires_when: z.union([z.boolean(), z.literal('present')]).meta({ description: 'The value of the field that makes it fire (`present`: any value)' }),
  check: z.string().nullable().meta({ description: 'The check whose failure makes it unknown (never fired, named `rule:<id>` in `unavailable`)' }),
  parameters: z.array(z.object({
    name: z.string().meta({ description: 'How a rule file sets it: `params: { events_1h: 10 }`' }),
    description: z.string(),
    default: z.number().int(),
    min: z.number().int(),
    max: z.number().int(),
  })).meta({ description: 'The thresholds a rule file may set, whole numbers from min to max (empty: none)' }),
});

export const getRuleLibrary = adminRoute({
  method: 'GET', url: '/accounts/:account/rules/library', tag: 'rules', operationId: 'getRuleLibrary',
  summary: 'The library: every built-in rule, with its default score and the fact it reads',
  description: 'A rule file enables a library rule by id (`- library: ip_tor`) and may set its score, mode and parameters (`params:`).',
  access: { role: 'analyst', account: true },
  params: accountParams,
  success: {
    status: 200, description: 'Every library rule, in the library\'s order', schema: z.object({ rules: z.array(libraryRule) }),
    example: { rules: [{ id: 'ip_tor', name: 'IP address is a Tor exit node', description: 'Traffic leaves the Tor network here: anonymous by design, and common in abuse.', default_score: 40, reads: 'ip.is_tor', fires_when: true, check: 'ip.tor', parameters: [] }] },
  },
  handler: async () => ({ rules: libraryCatalogue() }),
});

const field = z.object({
  path: z.string().meta({ description: 'How a condition names it: `{ field: ip.country_code, in: [KP] }`' }),
  type: z.enum(['text', 'number', 'boolean', 'ip']),
  value_type: z.enum(['string', 'number', 'boolean']).meta({ description: 'The JSON type of the values it is compared with' }),
  description: z.string(),
  operators: z.array(z.enum(OPERATORS)).meta({ description: 'The operators its type accepts' }),
  check: z.string().nullable().meta({ description: 'The check in `unavailable` that makes it unknown when it could not run' }),
});

export const getRuleFields = adminRoute({
  method: 'GET', url: '/accounts/:account/rules/fields', tag: 'rules', operationId: 'getRuleFields',
  summary: 'The field catalogue: every field a custom rule can read, its type and the operators it accepts',
  description: 'Conditions combine with `all`, `any` and `not`. A field whose check could not run is unknown: no rule fires on it (docs/rules.md, "Unknown and absent"). With `event_type`, the velocity counters that event type\'s draft (else its live version) defines are listed too, as `velocity.<name>` (docs/rules.md, "Velocity counters").',
  access: { role: 'analyst', account: true },
  params: accountParams,
  query: z.object({
    event_type: z.string().min(1).max(64).optional().meta({ description: 'Also list the velocity counters of this event type\'s draft, else of its live version.' }),
  }),
  success: {
    status: 200, description: 'Every field, and the combinators', schema: z.object({ fields: z.array(field), combinators: z.array(z.enum(['all', 'any', 'not'])) }),
    example: {
      fields: [{ path: 'ip.country_code', type: 'text', value_type: 'string', description: 'ISO 3166-1 alpha-2, upper case (GB).', operators: ['equals', 'not_equals', 'in', 'not_in', 'exists', 'ends_with', 'matches'], check: 'ip.geo' }],
      combinators: ['all', 'any', 'not'],
    },
  },
  handler: async ({ account, query, services }) => {
    const fields = fieldCatalogue();
    if (query.event_type !== undefined) {
      const version = await services.store.ruleSets.inStatus(account.id, query.event_type, 'draft') ?? await services.store.ruleSets.inStatus(account.id, query.event_type, 'published');
      if (version !== undefined) fields.push(...velocityCatalogue(ruleFileData(version.yaml)));
    }
    return { fields, combinators: ['all' as const, 'any' as const, 'not' as const] };
  },
});

export const ruleCatalogueRoutes = [getRuleLibrary, getRuleFields];
