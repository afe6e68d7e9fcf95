import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { expect } from 'vitest';
import { bearer, evaluationBody, KEY_A, type TestApp } from './app.js';
import { expectEvaluation, expectProblem, JSON_TYPE } from './contract.js';

/**
 * Shared by the property-based suites in test/fuzz: one real app per file, every answer checked
 * against the HTTP contract whatever it is.
 *
 * Runs are scaled by FUZZ_SCALE (default 1, the CI budget): `FUZZ_SCALE=20 npx vitest run test/fuzz`
 * fuzzes twenty times longer. A failure prints fast-check's seed and path; replay it with
 * `FUZZ_SEED=<seed> FUZZ_PATH=<path>`.
 */
const scale = Number(process.env.FUZZ_SCALE ?? '1');

export function fuzzOptions(numRuns: number): fc.Parameters<unknown> {
  const replay = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH };
  return { numRuns: Math.max(1, Math.round(numRuns * scale)), ...replay };
}

export const EVALUATE = '/v1/risk/evaluate';

/** POSTs to the evaluate route with a valid key unless the headers say otherwise. */
export function postEvaluate(t: TestApp, payload: string | Buffer | object, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: EVALUATE,
    headers: { 'content-type': 'application/json', ...bearer(KEY_A), ...headers },
    payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
  });
}

/**
 * The path a router sees, normalised as a URL parser does: `/v1/risk/./evaluate` and
 * `/v1/risk/%65valuate` are `/v1/risk/evaluate` (RFC 3986 §5.2.4, §6.2.2.2).
 */
function decodedPath(url: string): string {
  let path = url.split('?')[0]!;
  try {
    path = new URL(path, 'http://localhost').pathname;
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

const SUCCESSFUL_ROUTES = new Set(['/healthz', '/readyz', '/openapi.json', EVALUATE]);

/**
 * Whatever was sent: never a 5xx; a 200 is an evaluation (or an operations route's JSON);
 * anything else is a well-formed problem. Returns the problem or evaluation body.
 */
export function expectContract(response: LightMyRequestResponse, request: Pick<InjectOptions, 'method' | 'url'> = { method: 'POST', url: EVALUATE }) {
  expect(response.statusCode, response.body).toBeLessThan(500);
  const path = decodedPath(String(request.url ?? EVALUATE));
  if (response.statusCode === 200) {
    expect(SUCCESSFUL_ROUTES.has(path), `200 for ${request.method} ${path}`).toBe(true);
    if (request.method === 'HEAD') return undefined;
    if (path === EVALUATE) return expectEvaluation(response);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    return response.json();
  }
  if (request.method === 'HEAD') {
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    return undefined;
  }
  return expectProblem(response);
}

/** After the storm: alive, still evaluating, and nothing logged at error level. */
export async function expectHealthy(t: TestApp): Promise<void> {
  const health = await t.app.inject('/healthz');
  expect(health.statusCode).toBe(200);
  expect(health.json()).toEqual({ status: 'ok' });
  expectEvaluation(await postEvaluate(t, evaluationBody()));
  const failures = t.logs.lines.filter((l) => l.level === 'error' || l.level === 'fatal');
  expect(failures.map((l) => JSON.stringify(l).slice(0, 500))).toEqual([]);
}
