import { afterEach, describe, expect, it } from 'vitest';
import { isSaneRequestId } from '../../src/http/request-id.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { expectProblem } from '../support/contract.js';

/**
 * Request correlation (issue 18): `X-Request-Id` is echoed when it is a sane token and replaced
 * when it is not; the id is on the request's log line and in every problem as `instance`; the
 * evaluation keeps its own id.
 */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function evaluate(headers: Record<string, string>, payload: object = evaluationBody()) {
  t ??= await startTestApp();
  return t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: { ...bearer(KEY_A), ...headers }, payload });
}

const logLineOf = (requestId: string) => t!.logs.lines.filter((l) => l.request_id === requestId);

describe('X-Request-Id', () => {
  it.each([
    ['a UUID', '5f0c6a8e-2b7d-4f5e-9a3c-0d1e2f3a4b5c'],
    ['a ULID', '01JD3X6G7Q8R9S0T1V2W3X4Y5Z'],
    ['an AWS trace id', 'Root=1-67891233-abcdef012345678912345678'],
    ['base64 with padding', 'dGVzdC1pZA+/=='],
    ['128 characters', 'a'.repeat(128)],
  ])('echoes %s, logs it and keeps the evaluation id apart', async (_name, id) => {
    const response = await evaluate({ 'x-request-id': id });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-request-id']).toBe(id);
    const [line] = logLineOf(id);
    expect(line).toMatchObject({ msg: 'evaluation', status: 200 });
    // The evaluation id is the service's own, sortable one; the request id does not replace it.
    const evaluationId = response.json().id as string;
    expect(evaluationId).not.toBe(id);
    expect((line!.evaluation as { id: string }).id).toBe(evaluationId);
  });

  it.each([
    ['an empty value', ''],
    ['spaces', 'abc def'],
    ['an escaped line break and JSON (log forging)', 'abc\\n{"level":"error"}'],
    ['markup', '<script>alert(1)</script>'],
    ['non-ASCII', 'idé-42'],
    ['a leading dash', '-abc'],
    ['129 characters', 'a'.repeat(129)],
  ])('replaces %s with a generated UUID', async (_name, id) => {
    const response = await evaluate({ 'x-request-id': id });
    const echoed = response.headers['x-request-id'] as string;
    expect(echoed).toMatch(UUID);
    expect(logLineOf(echoed)).toHaveLength(1);
    expect(t!.logs.raw.join('\n')).not.toContain(id || '"request_id":""');
  });

  it('generates a different id for each request without one', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i += 1) ids.add((await evaluate({})).headers['x-request-id'] as string);
    expect(ids.size).toBe(5);
    for (const id of ids) expect(id).toMatch(UUID);
  });

  it('names the request in a problem as its instance, and on its log line', async () => {
    const response = await evaluate({ 'x-request-id': 'req-4711' }, evaluationBody({ ip: 'not an ip' }));
    const problem = expectProblem(response, 400, 'invalid_request');
    expect(problem.instance).toBe('urn:risk-evaluation:request:req-4711');
    expect(logLineOf('req-4711')).toMatchObject([{ status: 400 }]);
  });

  it('is on the answers of the probes, the 404 and the OpenAPI document too', async () => {
    t = await startTestApp();
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/nothing']) {
      const response = await t.app.inject({ url, headers: { 'x-request-id': `probe${url.replace(/\//g, '-')}` } });
      expect(response.headers['x-request-id'], url).toBe(`probe${url.replace(/\//g, '-')}`);
    }
  });

  it('the token rule itself', () => {
    expect(isSaneRequestId('a')).toBe(true);
    expect(isSaneRequestId('A1._~:@+=/-')).toBe(true);
    expect(isSaneRequestId(['a', 'b'])).toBe(false);
    expect(isSaneRequestId(undefined)).toBe(false);
    expect(isSaneRequestId('a,b')).toBe(false);
  });
});

describe('headers a client and its browser rely on', () => {
  it('every response says nosniff; answers under /v1 are never stored by a cache', async () => {
    t = await startTestApp({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' });
    const v1 = [
      await t.app.inject({ method: 'GET', url: '/v1/risk/evaluate', headers: bearer(KEY_A) }),
      await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody() }),
      await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', payload: evaluationBody() }),
      await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody() }),
    ];
    expect(v1.map((r) => r.statusCode)).toEqual([405, 200, 401, 429]);
    for (const response of v1) {
      expect(response.headers['cache-control'], String(response.statusCode)).toBe('no-store');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    }
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/nothing', '/v1/%zz']) {
      const response = await t.app.inject({ url });
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });
});
