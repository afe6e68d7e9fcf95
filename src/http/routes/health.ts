import { monitorEventLoopDelay } from 'node:perf_hooks';
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

  // Event-loop delay since start: the figure that shows whether anything blocks the request path.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  app.addHook('onClose', async () => loopDelay.disable());

  // Readiness: rules and data are loaded (the app is only built once they are) and we are not draining.
  app.get('/readyz', async (_request, reply) => {
    if (!readiness.accepting()) return renderProblem(reply, problems.notReady('The service is shutting down'));
    const memory = process.memoryUsage();
    return {
      status: 'ready',
      sources: readiness.sources(),
      runtime: {
        uptime_s: Math.round(process.uptime()),
        rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
        event_loop_delay_p99_ms: Math.round((loopDelay.percentile(99) / 1e6) * 100) / 100,
      },
    };
  });
}
