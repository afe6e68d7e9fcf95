import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmailInspector } from '../../src/email/facts.js';
import type { IpInspector } from '../../src/ip/facts.js';
import type { RuleBook } from '../../src/rules/ports.js';
import { ruleBookFromDirectory } from '../support/rules.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation, expectProblem, PROBLEM_TYPE, STACK_FRAME } from '../support/contract.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

const INTERNAL = 'secret internal detail at /srv/app/src/rules/engine.js:42:7';

const evaluate = (app: TestApp['app'], payload: unknown = evaluationBody()) =>
  app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: payload as object });

async function realRuleBook(): Promise<RuleBook> {
  return ruleBookFromDirectory('rules');
}

/** A 500 is a problem like any other, and says nothing of what failed inside. */
function expectOpaque500(response: Awaited<ReturnType<typeof evaluate>>) {
  expect(response.statusCode).toBe(500);
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  expect(response.json()).toEqual({
    type: 'urn:risk-evaluation:problem:internal_error',
    title: 'The service failed to answer',
    status: 500,
    detail: 'An unexpected error occurred; it has been logged',
    instance: `urn:risk-evaluation:request:${String(response.headers['x-request-id'])}`,
    code: 'internal_error',
  });
  expect(response.body).not.toContain('secret');
  expect(response.body).not.toMatch(STACK_FRAME);
}

describe('no internals in any error', () => {
  it('500 from a component that throws carries no message or stack, and the log has both', async () => {
    const real = await realRuleBook();
    // The rule step itself degrades the answer when it throws (test/rules/http.test.ts); the event
    // type check before it is a component whose failure still fails the request.
    const broken: RuleBook = { ...real, eventTypes: () => { throw new TypeError(INTERNAL); } };
    t = await startTestApp({}, { rules: broken });
    expectOpaque500(await evaluate(t.app));
    const logged = t.logs.lines.find((l) => l.msg === 'request failed') as { err?: { message: string; stack: string } } | undefined;
    expect(logged?.err?.message).toBe(INTERNAL);
    expect(logged?.err?.stack).toContain('TypeError');
  });

  it('500 from a thrown non-Error value, and from an error that claims a status of its own', async () => {
    const real = await realRuleBook();
    let thrown: unknown = 'a bare string with a secret';
    const broken: RuleBook = { ...real, eventTypes: () => { throw thrown; } };
    t = await startTestApp({}, { rules: broken });
    expectOpaque500(await evaluate(t.app));
    thrown = Object.assign(new Error('secret upstream said 503'), { statusCode: 503, code: 'EUPSTREAM' });
    expectOpaque500(await evaluate(t.app));
  });

  it('an e-mail or IP step that throws degrades the answer instead of failing it', async () => {
    const email: EmailInspector = { inspect: async () => { throw new Error(INTERNAL); }, inspectCached: () => undefined, status: () => [], close: async () => {} };
    const ip: IpInspector = { inspect: () => { throw new Error(INTERNAL); }, status: () => [], close: async () => {} };
    t = await startTestApp({}, { email, ip });
    const body = expectEvaluation(await evaluate(t.app));
    expect(body.unavailable).toEqual(expect.arrayContaining(['email.mx', 'ip.geo']));
    expect(JSON.stringify(body)).not.toContain('secret');
  });

  it.each([
    ['401', { method: 'POST' as const, url: '/v1/risk/evaluate', headers: {} }],
    ['404', { method: 'GET' as const, url: '/nothing/here' }],
    ['405', { method: 'DELETE' as const, url: '/v1/risk/evaluate', headers: bearer(KEY_A) }],
    ['415', { method: 'POST' as const, url: '/v1/risk/evaluate', headers: { ...bearer(KEY_A), 'content-type': 'text/plain' }, payload: 'x' }],
    ['400 invalid_json', { method: 'POST' as const, url: '/v1/risk/evaluate', headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, payload: '{"a":' }],
    ['400 bad percent-encoding in the path', { method: 'GET' as const, url: '/v1/risk/%zz' }],
  ])('%s: a problem, no stack, no x-powered-by', async (_name, request) => {
    t = await startTestApp();
    const response = await t.app.inject(request);
    expectProblem(response);
    expect(response.headers['x-powered-by']).toBeUndefined();
  });

  it('200: no x-powered-by either', async () => {
    t = await startTestApp();
    const response = await evaluate(t.app);
    expectEvaluation(response);
    expect(response.headers['x-powered-by']).toBeUndefined();
  });
});

describe('what the HTTP parser refuses is a problem too (real port)', () => {
  /** Writes raw bytes to a real socket and returns everything the server wrote back before closing. */
  async function exchange(request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as { port: number };
    const text = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received += chunk));
      socket.on('close', () => resolve(received));
      // The server destroys the socket after a parser error; a reset after its answer is still an answer.
      socket.on('error', () => {});
      socket.end(request);
    });
    const [head, body = ''] = text.split('\r\n\r\n');
    const [statusLine, ...lines] = head!.split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    return { status: Number(statusLine!.split(' ')[1]), headers, body };
  }

  function expectRawProblem(raw: Awaited<ReturnType<typeof exchange>>, status: number, code: string) {
    expect(raw.status).toBe(status);
    expect(raw.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(Number(raw.headers['content-length'])).toBe(Buffer.byteLength(raw.body));
    expect(JSON.parse(raw.body)).toMatchObject({ status, code, type: `urn:risk-evaluation:problem:${code}`, instance: `urn:risk-evaluation:request:${raw.headers['x-request-id']}` });
    expect(raw.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(raw.headers['x-content-type-options']).toBe('nosniff');
  }

  it('431 for headers over Node’s limit', async () => {
    const raw = await exchange(`POST /v1/risk/evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'k'.repeat(20_000)}\r\n\r\n`);
    expectRawProblem(raw, 431, 'headers_too_large');
  });

  it('400 for a request line that is not HTTP', async () => {
    const raw = await exchange('NOT HTTP AT ALL\r\n\r\n');
    expectRawProblem(raw, 400, 'malformed_request');
  });

  it('400 for an HTTP/1.1 request without Host (RFC 9112 §3.2), and the connection closed', async () => {
    const raw = await exchange('GET /healthz HTTP/1.1\r\n\r\n');
    expectRawProblem(raw, 400, 'malformed_request');
    expect(raw.headers.connection).toBe('close');
  });

  // RFC 9112 §3.2. Node keeps the first Host and drops the rest: a proxy routing on one and the
  // service reading another is how a request is smuggled past a routing rule.
  it.each([
    ['two Host lines', 'Host: a.example\r\nHost: b.example\r\n', /more than one Host/],
    ['two Host lines, one empty', 'Host: a.example\r\nhost:\r\n', /more than one Host/],
    ['a Host with a space', 'Host: a.example b.example\r\n', /not a host/],
    ['a Host with a path', 'Host: a.example/evil\r\n', /not a host/],
    ['a Host with a user', 'Host: user@a.example\r\n', /not a host/],
  ])('400 for %s, and the connection closed', async (_name, hostLines, detail) => {
    const raw = await exchange(`GET /healthz HTTP/1.1\r\n${hostLines}\r\n`);
    expectRawProblem(raw, 400, 'malformed_request');
    expect(JSON.parse(raw.body).detail).toMatch(detail);
    expect(raw.headers.connection).toBe('close');
  });

  it.each([['a.example'], ['a.example:8080'], ['127.0.0.1:3000'], ['[::1]:3000'], ['xn--bcher-kva.example']])('a single Host %s is served', async (host) => {
    const raw = await exchange(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(raw.status).toBe(200);
  });

  it('417 for an Expect other than 100-continue', async () => {
    const raw = await exchange('GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n');
    expectRawProblem(raw, 417, 'expectation_failed');
  });

  it('an HTTP/1.0 request needs no Host', async () => {
    const raw = await exchange('GET /healthz HTTP/1.0\r\n\r\n');
    expect(raw.status).toBe(200);
  });

  it('400 for a path that is not valid percent-encoding', async () => {
    const raw = await exchange('GET /v1/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectRawProblem(raw, 400, 'malformed_request');
  });
});
