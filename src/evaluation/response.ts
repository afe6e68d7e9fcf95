import { z } from 'zod';

/**
 * The evaluation response (PRODUCT.md). This schema documents the contract in the OpenAPI document;
 * the handler builds the object with the TypeScript type and serialises it with plain JSON.stringify,
 * which costs a fraction of validating every response against a schema.
 */
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

const scoreDetailSchema = z.object({
  rule_name: z.string().meta({ example: 'Email address is disposable' }),
  rule_type: z.literal('static'),
  score: z.number().meta({ description: 'Points the rule contributed; negative scores lower the risk.' }),
});

export const emailFactsSchema = z.object({
  address: z.string().meta({ description: 'As sent.' }),
  normalized: z.string().meta({ description: 'Local part as sent, lower-cased domain with IDN as punycode.' }),
  domain: z.string(),
  canonical: z.string().meta({ description: "One person's many addresses fold to this form (provider-aware dots and +tags)." }),
  deliverable: nullable(z.boolean()).meta({ description: '`null` when deliverability could not be decided.' }),
  deliverability: z.enum(['deliverable', 'undeliverable', 'unknown']),
  mx_records: nullable(z.array(z.object({ exchange: z.string(), priority: z.number().int() }))),
  disposable: nullable(z.boolean()),
  free_provider: nullable(z.boolean()),
  role_account: nullable(z.boolean()),
  relay: nullable(z.boolean()).meta({ description: 'A forwarding service (SimpleLogin, Firefox Relay, Hide My Email…): a real person, not a throw-away box.' }),
  suggested_domain: nullable(z.string()).meta({ description: 'A likely intended domain when this one looks like a typo of a major provider.' }),
});

export const ipFactsSchema = z.object({
  address: z.string(),
  version: z.union([z.literal(4), z.literal(6)]),
  country_code: nullable(z.string()),
  country: nullable(z.string()),
  region: nullable(z.string()),
  city: nullable(z.string()),
  postal_code: nullable(z.string()),
  latitude: nullable(z.number()),
  longitude: nullable(z.number()),
  accuracy_radius_km: nullable(z.number()),
  time_zone: nullable(z.string()),
  asn: nullable(z.number().int()),
  as_organization: nullable(z.string()),
  is_tor: nullable(z.boolean()),
  is_proxy: nullable(z.boolean()),
  is_datacenter: nullable(z.boolean()),
  is_vpn: nullable(z.boolean()),
  is_bogon: nullable(z.boolean()),
});

export const evaluationResponseSchema = z.object({
  id: z.string().meta({ description: 'Unique, time-sortable (UUIDv7).' }),
  event_type: z.string(),
  score: z.object({
    details: z.array(scoreDetailSchema).meta({ description: 'One entry per rule that fired, in the rule file’s order.' }),
    fraud_score: z.number().min(0).max(100).meta({ description: 'Sum of the fired rules’ scores, clamped to 0..100.' }),
    state: z.enum(['approve', 'review', 'decline']).meta({ description: 'approve < 20 <= review < 40 <= decline (thresholds per event type).' }),
  }),
  dry_run: z.array(scoreDetailSchema).meta({ description: 'Rules in dry-run mode that would have fired; not counted.' }),
  signals: z.array(z.string()).meta({ description: 'Every signal that was true, whether or not a rule fired on it.' }),
  email: emailFactsSchema,
  ip: ipFactsSchema,
  unavailable: z.array(z.string()).meta({ description: 'Checks that could not run (e.g. `email.mx` when DNS timed out). No rule fires on them.' }),
  evaluated_at: z.iso.datetime(),
  took_ms: z.number(),
});

export type EvaluationResponse = z.infer<typeof evaluationResponseSchema>;
