import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { parseIp } from '../ip/address.js';
import { isBogonAddress } from '../ip/bogon.js';

/**
 * One outbound webhook request (PRODUCT.md "Review"), as a queue's worker makes it: a POST with a
 * deadline for the whole exchange, redirects never followed (a 3xx is a failed attempt: following
 * one would let a receiver point the service at any address), and private, loopback and link-local
 * destinations refused unless the operator allows them (WEBHOOK_ALLOW_PRIVATE). The check is made
 * on the address actually connected to (the socket's own look-up), so a name that resolves to a
 * private address, or changes its answer between a check and the connection, is refused too.
 * At most MAX_RESPONSE_BYTES of the answer are read (kept for the delivery log); the rest is dropped.
 */
export const MAX_RESPONSE_BYTES = 4_096;

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  deadlineMs: number;
  allowPrivate: boolean;
  /** The look-up for names (tests point it at their own resolver); the system's by default. */
  lookup?: LookupFunction;
}

export interface WebhookAttempt {
  /** `delivered`: a 2xx. Anything else is `failed` and retried on the queue's back-off. */
  outcome: 'delivered' | 'failed';
  status_code: number | null;
  duration_ms: number;
  /** Why it failed, for the delivery log: `status 503`, `redirect not followed (302)`, `deadline (5000 ms)`, `private address refused (10.0.0.1)`… */
  error: string | null;
  /** The start of the answer's body. */
  response: string | null;
}

export class PrivateAddressError extends Error {
  override name = 'PrivateAddressError';
}

function refusesPrivate(address: string): boolean {
  const parsed = parseIp(address);
  return 'error' in parsed || isBogonAddress(parsed);
}

/** The socket's look-up, refusing every private answer (all of them are checked: any may be used). */
function guardedLookup(lookup: LookupFunction): LookupFunction {
  return ((hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as unknown as LookupAddress[];
      const refused = list.find((a) => refusesPrivate(a.address));
      if (refused) return callback(new PrivateAddressError(`private address refused (${refused.address})`), '');
      const all = (options as { all?: boolean }).all === true;
      return all ? callback(null, list) : callback(null, list[0]!.address, list[0]!.family);
    });
  }) as LookupFunction;
}

export function sendWebhook(request: WebhookRequest): Promise<WebhookAttempt> {
  const started = performance.now();
  const result = (outcome: WebhookAttempt['outcome'], status: number | null, error: string | null, response: string | null = null): WebhookAttempt =>
    ({ outcome, status_code: status, duration_ms: Math.round(performance.now() - started), error, response });
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(result('failed', null, 'not a URL'));
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.resolve(result('failed', null, `scheme ${url.protocol} refused`));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = parseIp(host);
  // A literal address is not looked up, so it is checked here.
  if (!request.allowPrivate && !('error' in literal) && isBogonAddress(literal)) return Promise.resolve(result('failed', null, `private address refused (${host})`));

  return new Promise((resolve) => {
    const options: RequestOptions = {
      method: 'POST',
      headers: { ...request.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body), 'user-agent': 'risk-evaluation-webhooks/1' },
      signal: AbortSignal.timeout(request.deadlineMs),
      lookup: request.allowPrivate ? request.lookup ?? dnsLookup : guardedLookup(request.lookup ?? dnsLookup),
      agent: false,
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(url, options, (incoming) => {
      const status = incoming.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on('data', (chunk: Buffer) => {
        if (size < MAX_RESPONSE_BYTES) chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
        size += chunk.length;
      });
      // The deadline may fall while the answer is read: a failed attempt, like any other cut.
      incoming.on('error', (error) => resolve(result('failed', status, error.name === 'AbortError' ? `deadline (${request.deadlineMs} ms)` : error.message)));
      incoming.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (status >= 200 && status < 300) resolve(result('delivered', status, null, body));
        else if (status >= 300 && status < 400) resolve(result('failed', status, `redirect not followed (${status})`, body));
        else resolve(result('failed', status, `status ${status}`, body));
      });
    });
    outgoing.on('error', (error: Error & { code?: string }) => {
      if (error.name === 'AbortError' || error.name === 'TimeoutError') resolve(result('failed', null, `deadline (${request.deadlineMs} ms)`));
      else if (error instanceof PrivateAddressError) resolve(result('failed', null, error.message));
      else resolve(result('failed', null, error.code ?? error.message));
    });
    outgoing.end(request.body);
  });
}
