import type { FastifyInstance } from 'fastify';
import { acceptJsonOnly } from '../http/json-body.js';
import { backtestRoutes } from './routes/backtests.js';
import { shadowRoutes } from './routes/shadows.js';
import { accountRoutes } from './routes/accounts.js';
import { auditRoutes } from './routes/audit.js';
import { decisionRoutes } from './routes/decisions.js';
import { healthRoutes } from './routes/health.js';
import { keyRoutes } from './routes/keys.js';
import { listRoutes } from './routes/lists.js';
import { reviewRoutes } from './routes/reviews.js';
import { entityRoutes } from './routes/entities.js';
import { webhookRoutes } from './routes/webhooks.js';
import { ruleCatalogueRoutes } from './routes/rule-catalogue.js';
import { ruleDraftRoutes } from './routes/rule-drafts.js';
import { ruleFileRoutes } from './routes/rule-files.js';
import { ruleSetRoutes } from './routes/rule-sets.js';
import { ruleHitRoutes } from './routes/rule-hits.js';
import { sessionRoutes } from './routes/session.js';
import { signInRoutes } from './routes/sign-in.js';
import { tokenRoutes } from './routes/tokens.js';
import { twoFactorRoutes } from './routes/two-factor.js';
import { userRoutes } from './routes/users.js';
import { ADMIN_PREFIX, registerAdminRoutes, type AdminRoute, type AdminServices } from './route.js';

/**
 * The admin API (PRODUCT.md "Admin API and console"): everything the console does, under
 * /admin/v1, in a Fastify scope of its own. It shares the app's error handler (problem+json),
 * request ids and log line; it has its own body parser (JSON only, as /v1), its own
 * authentication (a console session or an admin token, never an API key: see authenticate.ts) and
 * authorization declared per route (access.ts, route.ts). Every answer says `Cache-Control:
 * no-store`: they carry accounts' data and the session's CSRF token.
 */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  ...sessionRoutes, ...signInRoutes, ...twoFactorRoutes, ...accountRoutes, ...keyRoutes, ...userRoutes, ...tokenRoutes, ...auditRoutes, ...healthRoutes,
  ...ruleCatalogueRoutes, ...ruleSetRoutes, ...ruleDraftRoutes, ...ruleFileRoutes, ...decisionRoutes, ...listRoutes, ...reviewRoutes, ...webhookRoutes, ...backtestRoutes, ...shadowRoutes, ...entityRoutes, ...ruleHitRoutes,
];

export async function registerAdminApi(app: FastifyInstance, services: AdminServices, routes: readonly AdminRoute[] = ADMIN_ROUTES): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('cache-control', 'no-store');
      done(null, payload);
    });
    acceptJsonOnly(scope);
    registerAdminRoutes(scope, routes, services);
  }, { prefix: ADMIN_PREFIX });
}

export type { AdminServices } from './route.js';
