/**
 * Node's HTTP server options that make REQUEST_TIMEOUT_MS hold for the whole request, headers and
 * body alike (https://nodejs.org/api/http.html#httpcreateserveroptions-requestlistener).
 *
 * - `headersTimeout` defaults to 60 s. Fastify sets only `requestTimeout`, after the server is made;
 *   while `headersTimeout` is the longer of the two Node swaps them when it checks, so a slow body
 *   was allowed the 60 s meant for headers. Both are set here, equal.
 * - Node looks for expired requests every `connectionsCheckingInterval` (30 s by default), which a
 *   timeout of 10 s silently turns into 10–40 s. Checking at a tenth of the timeout (at most every
 *   second) keeps the bound within 10 % of what is configured; each check walks only the
 *   connections with a request still arriving.
 */
export function httpServerTimeouts(requestTimeoutMs: number) {
  return {
    headersTimeout: requestTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.round(requestTimeoutMs / 10))),
  };
}
