import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { StoreRequestError } from '../../store/errors.js';
import type { Store } from '../../store/index.js';
import { REVIEW_RESOLUTIONS, REVIEW_STATUSES } from '../../store/reviews.js';
import { Problem, problems } from '../problem.js';

/**
 * `GET /v1/risk/evaluations/{id}` (PRODUCT.md "Review"): an evaluation as it was answered, with
 * its review item's status and resolution: how a backend that held a sign-up learns the outcome
 * when it does not take webhooks. Another account's evaluation, or one the log no longer holds,
 * is the same 404: an account never learns that another's exists.
 */
export const EVALUATION_PATH = '/v1/risk/evaluations/:id';

export const evaluationReviewSchema = z.object({
  status: z.enum(REVIEW_STATUSES),
  resolution: z.enum(REVIEW_RESOLUTIONS).nullable().meta({ description: 'Once resolved: `approve` or `decline`.' }),
  reason: z.string().nullable(),
  resolved_at: z.iso.datetime().nullable(),
}).nullable().meta({ description: 'Null unless the evaluation was answered `review`; then its item, resolved or not.' });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function registerEvaluationRoute(scope: FastifyInstance, store: Store): void {
  scope.get<{ Params: { id: string } }>(EVALUATION_PATH, async (request) => {
    const id = request.params.id.toLowerCase();
    if (!UUID.test(id)) throw problems.evaluationNotFound(request.params.id.slice(0, 64));
    if (!store.health.available) throw problems.storeUnavailable();
    const account = request.account!;
    // Asked before the look-up: once that misses, the record may already have been written since.
    const queued = store.log.holds(id);
    try {
      let found = await store.decisions.get(account.id, id);
      if (found === undefined && queued) {
        // Evaluated a moment ago: still in this replica's log queue. Written now, then looked up again.
        await store.log.flush();
        found = await store.decisions.get(account.id, id);
      }
      if (found === undefined) throw problems.evaluationNotFound(id);
      const item = await store.reviews.get(account.id, id);
      const review: z.output<typeof evaluationReviewSchema> = item === undefined ? null : {
        status: item.status, resolution: item.resolution, reason: item.reason, resolved_at: item.resolved_at === null ? null : new Date(item.resolved_at).toISOString(),
      };
      return { ...(found.response as Record<string, unknown>), review };
    } catch (error) {
      if (error instanceof Problem || error instanceof StoreRequestError) throw error;
      store.health.down(error as Error);
      throw problems.storeUnavailable();
    }
  });
}
