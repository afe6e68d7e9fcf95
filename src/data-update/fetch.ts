import { EnvHttpProxyAgent, fetch, type Dispatcher } from 'undici';
import type { UpdateSettings } from './settings.js';

/** GETs a URL into a buffer, or throws an error saying what went wrong and where. */
export type Download = (url: string, headers?: Record<string, string>) => Promise<Buffer>;

export interface DownloadOptions {
  timeoutMs: number;
  /** Tries per URL, the first included. */
  attempts: number;
  /** Wait before the first retry; doubled for each further one (with jitter), at most MAX_DELAY_MS. */
  retryDelayMs: number;
  /** Where requests go: direct, or through the proxy the environment names (see proxyAgent). */
  dispatcher?: Dispatcher;
  /** How a wait is spent; tests pass one that records the delay instead of sleeping. */
  wait?: (ms: number) => Promise<void>;
  /** Told of each retry, for the job's output. */
  onRetry?: (message: string) => void;
}

/** A server's Retry-After is honoured up to this; so is the doubling back-off. */
const MAX_DELAY_MS = 5 * 60_000;

/**
 * Worth another try: the network failed, the attempt timed out, or the server said it could not
 * answer now (408, 429, 5xx). Any other 4xx (a wrong URL, a refused licence key) fails at once.
 */
class Retryable extends Error {
  constructor(message: string, readonly retryAfterMs: number | null = null) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The proxy settings of the environment, as curl and most tools read them: `HTTPS_PROXY` for
 * https URLs, `HTTP_PROXY` for http ones, hosts in `NO_PROXY` reached directly (lower-case names
 * win; undici's EnvHttpProxyAgent does the matching). Read from the settings' environment, not
 * from `process.env`, so what the job was given is what it uses.
 */
export function proxyAgent(proxy: UpdateSettings['proxy']): Dispatcher {
  return new EnvHttpProxyAgent({ httpProxy: proxy.http ?? '', httpsProxy: proxy.https ?? '', noProxy: proxy.noProxy ?? '' });
}

export function createDownload(options: DownloadOptions): Download {
  const wait = options.wait ?? sleep;
  return async (url, headers = {}) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await attemptDownload(url, headers, options);
      } catch (error) {
        if (!(error instanceof Retryable)) throw error;
        if (attempt >= options.attempts) {
          throw new Error(`${error.message}${options.attempts > 1 ? `, after ${options.attempts} attempts` : ''}`);
        }
        const backOff = options.retryDelayMs * 2 ** (attempt - 1);
        // Half fixed, half random: jobs started by the same schedule do not retry in step.
        const delay = Math.min(MAX_DELAY_MS, Math.max(error.retryAfterMs ?? 0, Math.round(backOff / 2 + Math.random() * (backOff / 2))));
        options.onRetry?.(`${error.message}: attempt ${attempt + 1} of ${options.attempts} in ${(delay / 1000).toFixed(1)} s`);
        await wait(delay);
      }
    }
  };
}

async function attemptDownload(url: string, headers: Record<string, string>, options: DownloadOptions): Promise<Buffer> {
  let response;
  try {
    response = await fetch(url, {
      headers,
      signal: AbortSignal.timeout(options.timeoutMs),
      redirect: 'follow',
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message;
    throw new Retryable(`${url}: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    const message = `${url}: HTTP ${response.status}`;
    if (response.status === 408 || response.status === 429 || response.status >= 500) {
      throw new Retryable(message, retryAfterMs(response.headers.get('retry-after')));
    }
    throw new Error(message);
  }
  try {
    return Buffer.from(await response.arrayBuffer());
  } catch (error) {
    // The body broke off (a reset, the timeout): as retryable as a failed connection.
    throw new Retryable(`${url}: ${(error as Error).message}`);
  }
}

/** `Retry-After` as seconds or an HTTP date (RFC 9110 §10.2.3), in ms from now. */
function retryAfterMs(value: string | null): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
