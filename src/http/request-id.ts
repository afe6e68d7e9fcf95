import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Request correlation. A caller (or its load balancer) may name a request with `X-Request-Id`;
 * the service answers with the same header, logs the id on the request's line (`request_id`) and
 * puts it in every problem as `instance`, so one id follows a request through every hop. An id
 * that is not a sane token is replaced, never echoed: the header is copied into logs and
 * responses, so it must not carry line breaks, markup, or a payload of any size.
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * 1 to 128 characters, starting with a letter or digit, then letters, digits and `._~:@+=/-`:
 * UUIDs, ULIDs, hex and base64 ids, and the `Root=1-…` style of some balancers all fit, and every
 * such token is a valid URN suffix (RFC 8141), so `instance` stays a URI.
 */
export const REQUEST_ID_PATTERN = '^[A-Za-z0-9][\\w.~:@+=/-]{0,127}$';
const SANE_ID = new RegExp(REQUEST_ID_PATTERN);

export function isSaneRequestId(value: unknown): value is string {
  return typeof value === 'string' && SANE_ID.test(value);
}

/** Fastify's `genReqId`: the caller's id when it is sane, otherwise a random UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return isSaneRequestId(given) ? given : randomUUID();
}

/** The problem's `instance` (RFC 9457 §3.1.5): this occurrence, named by its request id. */
export function problemInstance(requestId: string): string {
  return `urn:risk-evaluation:request:${requestId}`;
}
