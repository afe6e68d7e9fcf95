import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { PROBLEM_TYPE } from '../support/contract.js';
import { expectHealthy, fuzzOptions } from '../support/fuzz.js';

/**
 * Raw bytes on a real port: what Node's HTTP parser refuses never reaches a route, so only a
 * real socket shows what the client gets (app.inject builds a valid request whatever it is given).
 */
let t: TestApp;
let port: number;
beforeAll(async () => {
  // The storm holds well-formed requests from one address: behaviour history off, or ip_velocity
  // would decide the last one, and this file is about the wire.
  t = await startTestApp({ HISTORY_DAYS: '0' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await t.app.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends the bytes, half-closes, and reads every response until the server closes the connection. */
function exchange(bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    socket.on('error', () => {}); // a reset after the answer is still an answer
    socket.end(bytes);
  });
}

/** Splits pipelined HTTP/1.1 responses (Content-Length framing; we never answer chunked). */
function parseResponses(data: Buffer, headRequests: number): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = data;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    expect(end, `unterminated response head: ${rest.toString('latin1').slice(0, 200)}`).toBeGreaterThan(0);
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    expect(statusLine).toMatch(/^HTTP\/1\.1 \d{3} /);
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const status = Number(statusLine!.split(' ')[1]);
    const noBody = status < 200 || status === 204 || status === 304 || responses.length < headRequests;
    const length = noBody ? 0 : Number(headers['content-length'] ?? 0);
    responses.push({ status, headers, body: rest.subarray(end + 4, end + 4 + length).toString('utf8') });
    rest = rest.subarray(end + 4 + length);
  }
  return responses;
}

const VALID_BODY = JSON.stringify(evaluationBody());

const token = fc.oneof(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'get', 'P OST', 'TRACE', 'CONNECT', ''), fc.string({ unit: 'binary-ascii', maxLength: 8 }));
const target = fc.oneof(
  fc.constantFrom('/v1/risk/evaluate', '/healthz', '/readyz', '/openapi.json', '/v1/%zz', '/%', '*', 'http://example.com/v1/risk/evaluate', '/v1/risk/evaluate?x=%', '/a b', '/\u0000', ''),
  fc.string({ unit: 'binary-ascii', maxLength: 20 }).map((s) => `/${s}`),
);
const version = fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/1.1', 'HTTP/2.0', 'HTTP/1.1 ', 'HTTP/9.9', 'http/1.1', '');
const header = fc.oneof(
  fc.constantFrom(
    'Host: localhost',
    `Authorization: Bearer ${KEY_A}`,
    'Authorization: Bearer',
    'Content-Type: application/json',
    'Content-Type: application/json; charset=utf-16',
    'Content-Type: text/plain',
    `Content-Length: ${Buffer.byteLength(VALID_BODY)}`,
    'Content-Length: 0',
    'Content-Length: -1',
    'Content-Length: 99999999999999999999',
    'Content-Length: 5, 6',
    'Transfer-Encoding: chunked',
    'Transfer-Encoding: gzip, chunked',
    'Transfer-Encoding: identity',
    'Expect: 100-continue',
    'Expect: something-else',
    'Connection: close',
    'Connection: keep-alive',
    'X-Forwarded-For: 1.2.3.4',
    ' folded: continuation',
    'No-Colon-Header',
    ': empty-name',
    'Bad Name: x',
    'X: \u0000',
  ),
  fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), fc.string({ unit: 'binary-ascii', maxLength: 30 })).map(([n, v]) => `${n}: ${v}`),
  fc.integer({ min: 1_000, max: 40_000 }).map((n) => `X-Big: ${'x'.repeat(n)}`),
);
const body = fc.oneof(
  fc.constant(''),
  fc.constant(VALID_BODY),
  fc.constant(`${Buffer.byteLength(VALID_BODY).toString(16)}\r\n${VALID_BODY}\r\n0\r\n\r\n`),
  fc.constantFrom('0\r\n\r\n', 'zz\r\nabc\r\n0\r\n\r\n', '5\r\nabc\r\n', '{"a":'),
  fc.string({ unit: 'binary-ascii', maxLength: 60 }),
);
const lineEnd = fc.constantFrom('\r\n', '\r\n', '\n', '\r');

const generated = fc.tuple(token, target, version, fc.array(header, { maxLength: 6 }), body, lineEnd, fc.boolean()).map(([m, path, v, headers, payload, eol, closeIt]) => {
  const head = [`${m} ${path} ${v}`.trimEnd(), 'Host: localhost', ...headers, ...(closeIt ? ['Connection: close'] : [])].join(eol);
  return { text: `${head}${eol}${eol}${payload}`, head: m === 'HEAD' };
});

const VALID_REQUEST = `POST /v1/risk/evaluate HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(VALID_BODY)}\r\n\r\n${VALID_BODY}`;

/** A valid request with a few bytes inserted, deleted or replaced, or cut short, or sent twice. */
const mutatedValid = fc
  .tuple(
    fc.array(fc.tuple(fc.nat(VALID_REQUEST.length), fc.nat(3), fc.string({ unit: 'binary-ascii', maxLength: 3 })), { minLength: 0, maxLength: 3 }),
    fc.constantFrom('as is', 'cut', 'twice'),
    fc.nat(VALID_REQUEST.length),
  )
  .map(([edits, shape, cut]) => {
    let text = VALID_REQUEST;
    for (const [at, remove, insert] of edits) text = text.slice(0, at) + insert + text.slice(at + remove);
    if (shape === 'cut') text = text.slice(0, cut);
    if (shape === 'twice') text = text + text;
    return { text, head: false };
  });

const request = fc.oneof(generated, mutatedValid);

describe('fuzz: raw HTTP on a real port', () => {
  it('whatever bytes arrive: every answer is a problem or a 200, never a 5xx or another error shape', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(request, async ({ text, head }) => {
        const responses = parseResponses(await exchange(Buffer.from(text, 'latin1')), head ? 1 : 0);
        for (const response of responses) {
          seen.add(response.status);
          if (response.status === 100) continue;
          expect(response.status, text.slice(0, 200)).toBeLessThan(500);
          if (response.status === 200) {
            expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
            continue;
          }
          expect(response.headers['content-type'], `${response.status} for ${JSON.stringify(text.slice(0, 120))}`).toBe(PROBLEM_TYPE);
          if (response.body !== '') {
            const problem = JSON.parse(response.body);
            expect(problem.status).toBe(response.status);
            expect(typeof problem.code).toBe('string');
          }
        }
      }),
      fuzzOptions(300),
    );
    // Not vacuous: the parser's refusals and the routes' answers were both exercised.
    expect([...seen]).toEqual(expect.arrayContaining([400]));
    expect([...seen].some((s) => s === 200 || s === 401 || s === 404)).toBe(true);
  });

  it('a well-formed request on the same port still gets its evaluation, and the app is healthy', async () => {
    const [response] = parseResponses(await exchange(Buffer.from(VALID_REQUEST)), 0);
    expect(response!.status).toBe(200);
    expect(JSON.parse(response!.body).score.state).toBe('approve');
    await expectHealthy(t);
  });
});
