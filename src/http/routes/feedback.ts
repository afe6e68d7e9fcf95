import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LABELS, MAX_LABEL_REASON } from '../../store/labels.js';
import { StoreRequestError } from '../../store/errors.js';
import type { Store } from '../../store/index.js';
import { fieldErrorsOf } from '../field-errors.js';
import { problems } from '../problem.js';

/**
 * `POST /v1/risk/evaluations/{id}/feedback` (PRODUCT.md): what the caller's backend learned later
 * about an evaluation. One label per evaluation, the latest wins. Another account's evaluation,
 * or one the log no longer holds, is a 404: an account never learns that another's exists.
 */
export const FEEDBACK_PATH = '/v1/risk/evaluations/:id/feedback';

export const feedbackRequestSchema = z.strictObject({
  label: z.enum(LABELS).meta({ description: '`fraud`: it was abuse; `legit`: it was a real user.' }),
  reason: z.string().min(1).max(MAX_LABEL_REASON).optional().meta({ description: 'What was learned, for the analyst who reads it.' }),
});

export const feedbackResponseSchema = z.object({
  evaluation_id: z.string(),
  label: z.enum(LABELS),
  reason: z.string().nullable(),
  labelled_at: z.iso.datetime(),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function registerFeedbackRoute(scope: FastifyInstance, store: Store): void {
  scope.post<{ Params: { id: string } }>(FEEDBACK_PATH, async (request) => {
    const id = request.params.id.toLowerCase();
    if (!UUID.test(id)) throw problems.evaluationNotFound(request.params.id.slice(0, 64));
    const parsed = feedbackRequestSchema.safeParse(request.body);
    if (!parsed.success) throw problems.invalidRequest(fieldErrorsOf(parsed.error));
    if (!store.health.available) throw problems.storeUnavailable();
    const account = request.account!;
    const label = async () => store.labels.set(account.id, id, parsed.data.label, parsed.data.reason ?? null, { actor: `api:${account.id}` });
    // Asked before the look-up: once that misses, the record may already have been written since.
    const queued = store.log.holds(id);
    let row;
    try {
      row = await label().catch(async (error) => {
        // Evaluated a moment ago: still in this replica's log queue. Written now, then looked up again.
        if (!(error instanceof StoreRequestError) || error.code !== 'not_found' || !queued) throw error;
        await store.log.flush();
        return label();
      });
    } catch (error) {
      if (error instanceof StoreRequestError && error.code === 'not_found') throw problems.evaluationNotFound(id);
      store.health.down(error as Error);
      throw problems.storeUnavailable();
    }
    return { evaluation_id: id, label: row.label, reason: row.reason, labelled_at: new Date(row.created_at).toISOString() };
  });
}
