import { performance } from 'node:perf_hooks';

/**
 * A bounded load over a real port: `workers` concurrent loops, each sending one request at a time
 * until `amount` requests have been sent (or `until()` says stop). Every response is counted by
 * status; a request that ends without a response (connection refused, reset) is counted under its
 * error code. Nothing here asserts: the test reads the figures and decides.
 */
export interface LoadOptions<T> {
  /** Base URL of the service, e.g. `http://127.0.0.1:1234`. */
  url: string;
  workers: number;
  /** Requests in all; omitted: until `until()` turns true. */
  amount?: number;
  /** Checked before each request; the load stops when it returns true. */
  until?: () => boolean;
  /** The n-th request (0-based, in the order they are sent); `url` overrides the base URL. */
  request: (n: number) => { url?: string; path: string; key: string; body: unknown };
  /** Called with every answered request; its return value is kept in `results`. */
  inspect?: (answer: Answer, n: number) => T;
}

export interface Answer {
  status: number;
  body: unknown;
  /** As the client saw it: from sending the request to having read the whole body. */
  ms: number;
  /** `performance.now()` when the request was sent. */
  sentAt: number;
  /** The `Connection` response header: `close` tells the client not to reuse the connection. */
  connection?: string | null;
}

export interface LoadFigures<T> {
  sent: number;
  /** Count per HTTP status, and per error code for requests that got no response. */
  outcomes: Record<string, number>;
  /** Requests that got no HTTP response, with when they were sent. */
  noResponse: Array<{ n: number; code: string; sentAt: number }>;
  results: T[];
  slowestMs: number;
}

export async function runLoad<T = undefined>(options: LoadOptions<T>): Promise<LoadFigures<T>> {
  return startLoad(options).done;
}

/** The load started; `figures` fill in as answers arrive, `done` resolves once it has stopped. */
export function startLoad<T = undefined>(options: LoadOptions<T>): { figures: LoadFigures<T>; done: Promise<LoadFigures<T>> } {
  const figures: LoadFigures<T> = { sent: 0, outcomes: {}, noResponse: [], results: [], slowestMs: 0 };
  const more = (): boolean => (options.amount === undefined || figures.sent < options.amount) && !(options.until?.() ?? false);
  const count = (key: string): void => {
    figures.outcomes[key] = (figures.outcomes[key] ?? 0) + 1;
  };

  const worker = async (): Promise<void> => {
    while (more()) {
      const n = figures.sent++;
      const { url = options.url, path, key, body } = options.request(n);
      const sentAt = performance.now();
      let answer: Answer;
      try {
        const response = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await response.text();
        answer = {
          status: response.status,
          body: text === '' ? null : (JSON.parse(text) as unknown),
          ms: performance.now() - sentAt,
          sentAt,
          connection: response.headers.get('connection'),
        };
      } catch (error) {
        const code = errorCode(error);
        count(code);
        figures.noResponse.push({ n, code, sentAt });
        continue;
      }
      count(String(answer.status));
      figures.slowestMs = Math.max(figures.slowestMs, answer.ms);
      if (options.inspect) figures.results.push(options.inspect(answer, n));
    }
  };
  const done = Promise.all(Array.from({ length: options.workers }, worker)).then(() => figures);
  return { figures, done };
}

/** fetch wraps the socket error in `cause`: ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET… */
function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error as Error).name ?? 'error';
}

/** Statuses other than `ok`, for a readable failure message. */
export function failures(figures: LoadFigures<unknown>, ok = '200'): Record<string, number> {
  return Object.fromEntries(Object.entries(figures.outcomes).filter(([status]) => status !== ok));
}
