import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, Problem, problems } from './problem.js';

/** Maps what Fastify and its plugins throw to our problems; anything unrecognised is a 500 without internals. */
function toProblem(error: FastifyError, request: FastifyRequest, bodyLimit: number): Problem {
  if (error instanceof Problem) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problems.unsupportedMediaType(request.headers['content-type']);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problems.payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problems.invalidJson('The body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problems.invalidJson('The body does not match its Content-Length');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problems.invalidJson('The body is not valid JSON');
    case 'FST_BEARER_AUTH_MISSING_AUTHORIZATION_HEADER':
      return problems.unauthorized('Send "Authorization: Bearer <API key>"');
    case 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER':
      return problems.unauthorized('The API key is missing, malformed or not valid');
  }
  if (error.statusCode === 400) return problems.invalidJson('The body could not be read');
  return problems.internal();
}

export function renderProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).headers(problem.headers).type(PROBLEM_CONTENT_TYPE).send(problem.toBody());
}

export function registerErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toProblem(error, request, bodyLimit);
    if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    return renderProblem(reply, problem);
  });
  app.setNotFoundHandler((request, reply) => renderProblem(reply, problems.notFound(request.method, request.url.split('?')[0]!)));
}
