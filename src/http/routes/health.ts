import type { FastifyInstance } from 'fastify';
import type { SourceStatus } from '../../evaluation/facts.js';
import { renderProblem } from '../error-handler.js';
import { problems } from '../problem.js';

export interface Readiness {
  /** False while shutting down, so a load balancer stops sending before the drain. */
  accepting(): boolean;
  sources(): SourceStatus[];
}

export function registerHealthRoutes(app: FastifyInstance, readiness: Readiness): void {
  // Liveness: the process answers. Nothing else, so a slow dependency never gets a replica killed.
  app.get('/healthz', async () => ({ status: 'ok' }));

  // Readiness: rules and data are loaded (the app is only built once they are) and we are not draining.
  app.get('/readyz', async (_request, reply) => {
    if (!readiness.accepting()) return renderProblem(reply, problems.notReady('The service is shutting down'));
    return { status: 'ready', sources: readiness.sources() };
  });
}
