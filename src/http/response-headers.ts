import type { FastifyReply } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id.js';

/**
 * What every response carries: the id of the request it answers (echoed or generated), and
 * `nosniff`, so a browser never reads a JSON body as a page or a script.
 */
export function setCommonHeaders(reply: FastifyReply): FastifyReply {
  return reply.header(REQUEST_ID_HEADER, reply.request.id).header('x-content-type-options', 'nosniff');
}
