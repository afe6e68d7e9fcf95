import { z } from 'zod';
import { historyFactsSchema } from '../history/facts.js';
import { listFactsSchema } from '../lists/facts.js';
import { emailFactsSchema } from '../email/facts.js';
import { ipFactsSchema } from '../ip/facts.js';

/**
 * The evaluation response (PRODUCT.md). This schema documents the contract in the OpenAPI document;
 * the handler builds the object with the TypeScript type and serialises it with plain JSON.stringify,
 * which costs a fraction of validating every response against a schema.
 */
const scoreDetailSchema = z.object({
  rule_id: z.string().meta({ description: 'The rule’s id (library id or the custom rule’s `id`): stable across renames, what a backend branches on.', example: 'email_disposable' }),
  rule_name: z.string().meta({ example: 'Email address is disposable' }),
  rule_type: z.literal('static'),
  score: z.number().meta({ description: 'Points the rule contributed; negative scores lower the risk.' }),
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
  history: historyFactsSchema.nullable(),
  lists: listFactsSchema,
  unavailable: z.array(z.string()).meta({ description: 'Checks that could not run (e.g. `email.mx` when DNS timed out; `store` when the store did not answer, so the evaluation is not remembered). No rule fires on them.' }),
  evaluated_at: z.iso.datetime(),
  took_ms: z.number(),
});

export type EvaluationResponse = z.infer<typeof evaluationResponseSchema>;
