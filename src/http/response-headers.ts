import type { FastifyReply } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id.js';

/**
 * What every response carries: the id of the request it answers (echoed or generated), and
 * `nosniff`, so a browser never reads a JSON body as a page or a script.
 */
const NOSNIFF = ['x-content-type-options', 'nosniff'] as const;

export function setCommonHeaders(reply: FastifyReply): FastifyReply {
  return reply.header(REQUEST_ID_HEADER, reply.request.id).header(NOSNIFF[0], NOSNIFF[1]);
}

/** The same headers, for an answer written without Fastify (see error-handler.ts). */
export function commonHeaders(requestId: string): Record<string, string> {
  return { [REQUEST_ID_HEADER]: requestId, [NOSNIFF[0]]: NOSNIFF[1] };
}
