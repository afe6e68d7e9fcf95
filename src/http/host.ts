import type { IncomingMessage } from 'node:http';

/**
 * RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
 * request message that lacks a Host header field and to any request message that contains more
 * than one Host header field line or a Host header field with an invalid field value." Node keeps
 * the first of several Host lines in `headers.host` and drops the rest silently, so two are counted
 * in the raw headers. Behind a proxy that routes on one Host and a service that reads another,
 * that difference is how requests are smuggled past a routing rule.
 */

/** `uri-host [ ":" port ]` (RFC 3986 §3.2.2): an IP literal in brackets, or reg-name characters. */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[\w.~%!$&'()*+,;=-]*)(?::\d{0,5})?$/;

/** Why the request's Host is refused, or null when it is acceptable. */
export function hostProblem(request: IncomingMessage): string | null {
  const host = request.headers.host;
  if (host === undefined) return request.httpVersion === '1.1' ? 'An HTTP/1.1 request must carry a Host header' : null;
  if (hostLines(request.rawHeaders) > 1) return 'The request carries more than one Host header';
  if (!HOST_VALUE.test(host)) return 'The Host header is not a host name or address, with an optional port';
  return null;
}

function hostLines(raw: string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count += 1;
  }
  return count;
}
