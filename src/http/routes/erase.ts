import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MAX_EMAIL_LENGTH } from '../../email/address.js';
import { StoreRequestError } from '../../store/errors.js';
import type { Store } from '../../store/index.js';
import { fieldErrorsOf } from '../field-errors.js';
import { problems } from '../problem.js';

/**
 * `POST /v1/risk/erase` (PRODUCT.md, GDPR Art. 17): removes a person's behaviour history, their
 * evaluations in the log and those evaluations' labels, in this account only, and answers what it
 * removed. Lists stay (they are the account's own decisions). See src/store/erasure.ts.
 */
export const ERASE_PATH = '/v1/risk/erase';

export const eraseRequestSchema = z.strictObject({
  user_id: z.string().min(1).max(256).optional().meta({ description: 'The user id sent as `user.user_id`.' }),
  email: z.string().max(MAX_EMAIL_LENGTH).optional().meta({ description: 'The e-mail address. Its history is kept by canonical form, so the history of its other spellings (dots, +tags at Gmail) goes too; logged evaluations and their labels are found by this address as normalised (case, A-labels) only: erase another spelling, or the user id, to remove those logged under it.' }),
}).refine((body) => body.user_id !== undefined || body.email !== undefined, { message: 'give user_id, email or both', path: [] });

const count = z.number().int().min(0);
export const eraseResponseSchema = z.object({
  removed: z.object({
    history: z.object({
      identifiers: count.meta({ description: 'The person\'s identifier rows (first seen, last place).' }),
      counters: count,
      memberships: count.meta({ description: 'Their devices and countries, and their place among the accounts of IP addresses and devices.' }),
    }),
    evaluations: count.meta({ description: 'Evaluations in the log with this user id or e-mail address.' }),
    labels: count.meta({ description: 'Labels of those evaluations.' }),
  }),
});

export function registerEraseRoute(scope: FastifyInstance, store: Store): void {
  scope.post(ERASE_PATH, async (request) => {
    const parsed = eraseRequestSchema.safeParse(request.body);
    if (!parsed.success) throw problems.invalidRequest(fieldErrorsOf(parsed.error));
    if (!store.health.available) throw problems.storeUnavailable();
    const account = request.account!;
    try {
      const removed = await store.erase(account.id, { userId: parsed.data.user_id, email: parsed.data.email }, { actor: `api:${account.id}` });
      return { removed };
    } catch (error) {
      if (error instanceof StoreRequestError && error.code === 'invalid') {
        const [path, ...rest] = error.message.split(': ');
        throw problems.invalidRequest([{ path: rest.length > 0 ? path! : '(body)', message: rest.join(': ') || error.message }]);
      }
      store.health.down(error as Error);
      throw problems.storeUnavailable();
    }
  });
}
