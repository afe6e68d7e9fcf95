import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Problem, PROBLEM_CONTENT_TYPE, problems } from '../http/problem.js';
import { problemInstance } from '../http/request-id.js';
import { loggablePath } from '../http/request-log.js';
import { METRICS_PATH, METRICS_UNAUTHORIZED, metricsAccess } from './access.js';
import type { Metrics } from './metrics.js';

export interface MetricsListener {
  address: AddressInfo;
  close(): Promise<void>;
}

/** Headers and a GET have no reason to take long; a slow scraper must not hold a socket. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * `/metrics` on a listener of its own (METRICS_PORT, on METRICS_HOST: 127.0.0.1 unless set), apart
 * from the API port a load balancer publishes, so the figures are not public by accident. It
 * serves that one path and nothing else; with METRICS_TOKEN set it also wants the token.
 */
export async function listenForMetrics(options: { metrics: Metrics; host: string; port: number; token: string | null }): Promise<MetricsListener> {
  const allowed = metricsAccess(options.token);
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS }, (request, response) => {
    void answer(request, response).catch(() => {
      if (!response.headersSent) sendProblem(response, new Problem('internal_error', 'The metrics could not be read'));
      else response.destroy();
    });
  });

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = request.url ?? '/';
    if (url.split('?')[0] !== METRICS_PATH) return sendProblem(response, problems.notFound(request.method ?? 'GET', loggablePath(url)));
    if (request.method !== 'GET' && request.method !== 'HEAD') return sendProblem(response, problems.methodNotAllowed(request.method ?? '', ['GET', 'HEAD']));
    if (!allowed(request.headers.authorization)) return sendProblem(response, problems.unauthorized(METRICS_UNAUTHORIZED));
    const body = await options.metrics.render();
    response.writeHead(200, { 'content-type': options.metrics.contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    response.end(request.method === 'HEAD' ? undefined : body);
  }

  server.listen(options.port, options.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  return {
    address: server.address() as AddressInfo,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sendProblem(response: ServerResponse, problem: Problem): void {
  response.writeHead(problem.status, { 'content-type': PROBLEM_CONTENT_TYPE, 'x-content-type-options': 'nosniff', ...problem.headers });
  response.end(JSON.stringify(problem.toBody(problemInstance(crypto.randomUUID()))));
}
