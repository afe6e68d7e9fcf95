import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RuleSetError } from '../rules/rule-file.js';
import { StoreRequestError, storeFailure } from '../store/errors.js';
import { hostProblem } from './host.js';
import { PROBLEM_CONTENT_TYPE, Problem, problems } from './problem.js';
import { problemInstance, requestIdFor } from './request-id.js';
import { commonHeaders, setCommonHeaders } from './response-headers.js';

/** Maps what Fastify and its plugins throw to our problems; anything unrecognised is a 500 without internals. */
function toProblem(error: FastifyError, request: FastifyRequest, bodyLimit: number): Problem {
  if (error instanceof Problem) return error;
  // A change the store refused (the admin API): its message names what, never internals.
  if (error instanceof StoreRequestError) {
    if (error.code === 'not_found') return problems.resourceNotFound(error.message);
    if (error.code === 'conflict') return problems.conflict(error.message);
    return problems.invalidRequest([{ path: '(body)', message: error.message }]);
  }
  // A rule file the store refused (the admin API): every problem, with its path and line.
  if (error instanceof RuleSetError) return problems.invalidRuleFile(error.problems);
  const failure = storeFailure(error);
  if (failure === 'unavailable') return problems.storeUnavailable();
  if (failure === 'conflict') return problems.conflict('Another change made the same thing at the same time; read it again and retry');
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problems.unsupportedMediaType(request.headers['content-type']);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // A route may take more than BODY_LIMIT_BYTES (the admin API's rule files).
      return problems.payloadTooLarge(request.routeOptions.bodyLimit ?? bodyLimit);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problems.invalidJson('The body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problems.invalidJson('The body does not match its Content-Length');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problems.invalidJson('The body is not valid JSON');
    case 'FST_ERR_BAD_URL':
      return problems.malformedRequest('The URL path is not valid percent-encoding');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return problems.malformedRequest('A segment of the URL path is too long');
    case 'FST_BEARER_AUTH_MISSING_AUTHORIZATION_HEADER':
      return problems.unauthorized('Send "Authorization: Bearer <API key>"');
    case 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER':
      return problems.unauthorized('The API key is missing, malformed or not valid');
  }
  if (error.statusCode === 400) return problems.invalidJson('The body could not be read');
  return problems.internal();
}

export function renderProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).headers(problem.headers).type(PROBLEM_CONTENT_TYPE).send(problem.toBody(problemInstance(reply.request.id)));
}

/**
 * A problem written without Fastify (the parser refused the request, or Node answers `Expect`
 * itself): the same body and the headers every response carries, and the connection closed.
 */
function rawProblem(problem: Problem, requestId: string): { head: Record<string, string | number>; body: string } {
  const body = JSON.stringify(problem.toBody(problemInstance(requestId)));
  return {
    head: {
      'Content-Type': PROBLEM_CONTENT_TYPE,
      'Content-Length': Buffer.byteLength(body),
      ...commonHeaders(requestId),
      Connection: 'close',
      ...problem.headers,
    },
    body,
  };
}

/**
 * Fastify's `frameworkErrors` option: errors the router raises before any route or error handler
 * runs (a path such as `/v1/%zz`). Without it Fastify answers them in its own JSON shape.
 */
export function frameworkErrorHandler(bodyLimit: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // No hook runs for these replies: the headers the onSend hook adds are set here.
    renderProblem(setCommonHeaders(reply), toProblem(error, request, bodyLimit));
  };
}

/**
 * Fastify's `clientErrorHandler` option: the HTTP parser refused the request (headers over Node's
 * size limit, a request that does not parse, a request that timed out), so no request object
 * exists and the answer is written to the socket. Fastify's default writes its own JSON shape;
 * the contract is a problem everywhere.
 */
export function clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  // A reset connection has nobody left to answer (https://nodejs.org/api/http.html#event-clienterror).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const problem =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? problems.requestTimeout()
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? problems.headersTooLarge()
        : problems.malformedRequest('The request is not valid HTTP/1.1');
  // A body that stopped arriving belongs to a request whose headers were read: keep its id.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  const requestId = inFlight ? requestIdFor(inFlight.req) : randomUUID();
  this.log.debug({ code: error.code, status: problem.status, request_id: requestId }, 'client error');
  // As Node's own handler: once a response has begun, a second one would be read as the answer
  // to the client's next request.
  if (socket.writable && !inFlight?.headersSent) {
    const { head, body } = rawProblem(problem, requestId);
    const lines = Object.entries(head).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n${lines}\r\n${body}`);
  }
  socket.destroy(error);
}

export function registerErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  // An Expect other than 100-continue never reaches Fastify: Node answers it with an empty 417
  // unless the server listens for it (https://nodejs.org/api/http.html#event-checkexpectation).
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const problem = problems.expectationFailed(request.headers.expect);
    const { head, body } = rawProblem(problem, requestIdFor(request));
    response.writeHead(problem.status, head);
    response.end(body);
  });
  // RFC 9112 §3.2: no Host on HTTP/1.1, several Host lines, or a Host that is not a host is a 400.
  // Node's own check (`requireHostHeader`, turned off in app.ts) answers only the first, with an
  // empty body; this one answers all three with a problem.
  // A callback hook, not an async one: it runs on every request and a promise each time costs.
  app.addHook('onRequest', (request, reply, done) => {
    const problem = hostProblem(request.raw);
    if (problem !== null) {
      reply.header('connection', 'close');
      return done(problems.malformedRequest(problem));
    }
    done();
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toProblem(error, request, bodyLimit);
    if (problem.code === 'store_unavailable') request.log.warn({ error: (error as Error).message }, 'store unavailable for an admin request');
    else if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    return renderProblem(reply, problem);
  });
  app.setNotFoundHandler((request, reply) => renderProblem(reply, problems.notFound(request.method, request.url.split('?')[0]!)));
}
