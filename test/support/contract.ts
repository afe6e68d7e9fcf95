import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { deviceIntelligenceSchema, evaluationRequestSchema, userSchema } from '../../src/request/evaluation-request.js';
import { evaluationResponseSchema } from '../../src/evaluation/response.js';
import { INVALID_QUERY_TITLE, problemCodes, type ProblemCode } from '../../src/http/problem.js';

/**
 * The HTTP contract of PRODUCT.md as assertions, for tests that do not know in advance which
 * answer they will get (fuzzing): whatever the status, the body must be the right shape for it.
 */

export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Every path an `errors` entry may name: the request's fields, or the body as a whole. */
export const REQUEST_FIELD_PATHS: ReadonlySet<string> = new Set([
  '(body)',
  ...Object.keys(evaluationRequestSchema.shape),
  ...Object.keys(userSchema.shape).map((k) => `user.${k}`),
  ...Object.keys(deviceIntelligenceSchema.shape).map((k) => `device_intelligence.${k}`),
]);

/** A stack frame such as `at foo (/srv/app.js:42:7)` or `file:///x.ts:3`. */
export const STACK_FRAME = /\bat .*[/\\].*\.(?:[cm]?[jt]s):\d+|node:internal|file:\/\//;

export interface ProblemResponse {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ProblemCode;
  errors?: { path: string; message: string }[];
}

/**
 * Asserts a non-200 response is a well-formed problem consistent with its status; returns its body.
 * `fields`: the paths `errors` may name (default: the evaluation request's); `allow`: a 405's Allow.
 */
export function expectProblem(response: LightMyRequestResponse, status?: number, code?: ProblemCode, options: { fields?: ReadonlySet<string> | 'any'; allow?: string; ruleFile?: boolean } = {}): ProblemResponse {
  const fields = options.fields ?? REQUEST_FIELD_PATHS;
  expect(response.statusCode).toBeGreaterThanOrEqual(400);
  expect(response.statusCode).toBeLessThan(500);
  if (status !== undefined) expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  expect(response.body).not.toMatch(STACK_FRAME);
  const body = JSON.parse(response.body) as ProblemResponse;
  expect(Object.keys(body).sort()).toEqual(
    (body.errors === undefined ? ['code', 'detail', 'instance', 'status', 'title', 'type'] : ['code', 'detail', 'errors', 'instance', 'status', 'title', 'type']).sort(),
  );
  // The occurrence is the request, named as the X-Request-Id header names it.
  expect(body.instance).toBe(`urn:risk-evaluation:request:${String(response.headers['x-request-id'])}`);
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(body.code in problemCodes).toBe(true);
  if (code !== undefined) expect(body.code).toBe(code);
  expect(body.status).toBe(response.statusCode);
  expect(problemCodes[body.code].status).toBe(response.statusCode);
  expect(body.type).toBe(`urn:risk-evaluation:problem:${body.code}`);
  // A query parameter at fault is not titled as if the body were (problems.invalidQuery).
  expect(body.title).toBe(body.code === 'invalid_request' && body.detail.startsWith('Invalid query parameter') ? INVALID_QUERY_TITLE : problemCodes[body.code].title);
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);

  if (body.code === 'invalid_request' || body.code === 'invalid_json') {
    expect(Array.isArray(body.errors)).toBe(true);
    expect(body.errors!.length).toBeGreaterThan(0);
    // A rule file's problems also name the file, and for YAML the line and column (one file may hold two at one path).
    const paths = body.errors!.map((e) => (options.ruleFile ? JSON.stringify(e) : e.path));
    expect(new Set(paths).size, `one error per field: ${paths.join(', ')}`).toBe(paths.length);
    for (const error of body.errors!) {
      if (options.ruleFile) expect(['column', 'file', 'line', 'message', 'path']).toEqual(expect.arrayContaining(Object.keys(error)));
      else expect(Object.keys(error).sort()).toEqual(['message', 'path']);
      expect(typeof error.message).toBe('string');
      if (body.code === 'invalid_json') expect(error.path).toBe('(body)');
      else if (fields !== 'any') expect(fields.has(error.path), `errors[].path "${error.path}" names no request field`).toBe(true);
    }
  }
  if (body.code === 'unauthorized' || body.code === 'unauthenticated') expect(response.headers['www-authenticate']).toMatch(/^Bearer /);
  if (body.code === 'rate_limited' || body.code === 'too_many_attempts') expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  if (body.code === 'method_not_allowed') expect(response.headers.allow).toBe(options.allow ?? 'POST');
  return body;
}

/** Default bands of PRODUCT.md "Scores and states": approve < 20 <= review < 40 <= decline. */
export function stateFor(fraudScore: number): 'approve' | 'review' | 'decline' {
  return fraudScore < 20 ? 'approve' : fraudScore < 40 ? 'review' : 'decline';
}

/** Asserts a 200 response carries PRODUCT.md's response shape and its invariants; returns the body. */
export function expectEvaluation(response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toBe(JSON_TYPE);
  const parsed = evaluationResponseSchema.safeParse(JSON.parse(response.body));
  expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true);
  const body = parsed.data!;
  const { fraud_score, state, details } = body.score;
  expect(Number.isFinite(fraud_score)).toBe(true);
  expect(fraud_score).toBeGreaterThanOrEqual(0);
  expect(fraud_score).toBeLessThanOrEqual(100);
  expect(state).toBe(stateFor(fraud_score));
  // The sum of what fired, clamped to 0..100.
  const sum = details.reduce((n, d) => n + d.score, 0);
  expect(fraud_score).toBe(Math.min(100, Math.max(0, sum)));
  expect(body.unavailable.every((name) => typeof name === 'string')).toBe(true);
  expect(new Set(body.unavailable).size).toBe(body.unavailable.length);
  expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(body.took_ms).toBeGreaterThanOrEqual(0);
  return body;
}
