import type { FastifyInstance } from 'fastify';
import { problems } from '../http/problem.js';
import { METRICS_PATH, METRICS_UNAUTHORIZED, metricsAccess } from './access.js';
import type { Metrics } from './metrics.js';

/**
 * Every response is timed by route and status. A callback hook, not an async one: no promise per
 * response. `elapsedTime` is Fastify's own clock from the request's arrival to the response's end.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.requestCompleted(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** `GET /metrics` on the service's own port, for METRICS_TOKEN without METRICS_PORT: the token is required. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string): void {
  const allowed = metricsAccess(token);
  app.get(METRICS_PATH, async (request, reply) => {
    if (!allowed(request.headers.authorization)) throw problems.unauthorized(METRICS_UNAUTHORIZED);
    return reply.type(metrics.contentType).send(await metrics.render());
  });
}
