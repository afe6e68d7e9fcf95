import { z } from 'zod';
import type { ParsedEmail } from './address.js';
import type { Report, Resource } from '../core/ports.js';

/**
 * What the e-mail step reports and rules read (`email.*`). Written once, as a zod schema: it types
 * the code and documents the response in the OpenAPI document. Field names follow PRODUCT.md's
 * response. A value the service does not know is `null`, never a guess.
 */

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

export const emailFactsSchema = z.object({
  address: z.string().meta({ description: 'As sent.' }),
  normalized: z.string().meta({ description: 'Local part as sent, lower-cased domain with IDN as punycode.' }),
  domain: z.string(),
  canonical: z.string().meta({ description: "One person's many addresses fold to this form (provider-aware dots and +tags)." }),
  deliverable: nullable(z.boolean()).meta({ description: '`null` when deliverability could not be decided.' }),
  deliverability: z.enum(['deliverable', 'undeliverable', 'unknown']),
  mx_records: nullable(z.array(z.object({ exchange: z.string(), priority: z.number().int() }))).meta({
    description:
      'At most the 10 most preferred MX records, lowest priority first; when deliverable, only the hosts that can take mail. `[]` without MX records; `null` when unknown.',
  }),
  disposable: nullable(z.boolean()),
  free_provider: nullable(z.boolean()),
  role_account: nullable(z.boolean()),
  relay: nullable(z.boolean()).meta({ description: 'A forwarding service (SimpleLogin, Firefox Relay, Hide My Email…): a real person, not a throw-away box.' }),
  suggested_domain: nullable(z.string()).meta({ description: 'A likely intended domain when this one looks like a typo of a major provider.' }),
});

export type EmailFacts = z.infer<typeof emailFactsSchema>;
export type Deliverability = EmailFacts['deliverability'];
export type MxRecord = NonNullable<EmailFacts['mx_records']>[number];

export interface EmailInspector extends Resource {
  /**
   * Everything known about an address. Never rejects: what could not be checked before `signal`
   * aborts is `null` in the facts and named in `unavailable`.
   */
  inspect(email: ParsedEmail, signal: AbortSignal): Promise<Report<EmailFacts>>;
  /**
   * The same report at once when nothing has to be looked up on the network (the domain's answers
   * are cached), else `undefined`: the common case then costs no deadline, timer or promise.
   */
  inspectCached(email: ParsedEmail): Report<EmailFacts> | undefined;
}
