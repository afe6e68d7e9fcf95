import type { FastifyInstance } from 'fastify';
import { renderProblem } from '../error-handler.js';
import { problems } from '../problem.js';

export interface Readiness {
  /** False while shutting down, so a load balancer stops sending before the drain. */
  accepting(): boolean;
  /**
   * What the service runs without right now (`store` while the store is unreachable): still
   * ready, since evaluations answer without it, but an operator's probe can see it.
   */
  unavailable(): string[];
}

/**
 * The two probes are public, so they say nothing but whether to send traffic: no file, path,
 * entry count, error message or memory figure (a data file symlinked to /etc/passwd once had its
 * first lines shown here). Readiness names only what is degraded, by the names an evaluation's
 * `unavailable` uses. Which sources are loaded, and why one was refused, is in the start-up log,
 * the reload log lines, and the admin API (`/admin/v1/sources`, `/admin/v1/health`), behind
 * authentication.
 */
export function registerHealthRoutes(app: FastifyInstance, readiness: Readiness): void {
  // Liveness: the process answers. Nothing else, so a slow dependency never gets a replica killed.
  app.get('/healthz', async () => ({ status: 'ok' }));

  // Readiness: rules and data are loaded (the app is only built once they are) and we are not
  // draining. A store that is down degrades the service but does not make it unready: taking
  // every replica out of the load balancer would turn a degraded answer into none.
  app.get('/readyz', async (_request, reply) => {
    if (!readiness.accepting()) return renderProblem(reply, problems.notReady('The service is shutting down'));
    return { status: 'ready', unavailable: readiness.unavailable() };
  });
}
