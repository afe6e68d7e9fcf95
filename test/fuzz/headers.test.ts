import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, KEY_A, KEY_B, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation, expectProblem } from '../support/contract.js';
import { EVALUATE, expectContract, expectHealthy, fuzzOptions, postEvaluate } from '../support/fuzz.js';

/**
 * Everything around the body: Content-Type and charset, Authorization, header sizes, methods,
 * paths and query strings. Same contract: never a 5xx, a 200 is an evaluation, the rest problems.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.app.close();
});

const VALID = JSON.stringify(evaluationBody());

/** Characters Node accepts in a header value (RFC 9110 field-vchar, space and tab; latin-1 obs-text). */
const headerText = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength });

describe('fuzz: Content-Type', () => {
  const mediaType = fc.oneof(
    fc.constantFrom('application/json', 'APPLICATION/JSON', 'Application/Json'),
    fc.constantFrom('text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'application/json-seq', 'application/merge-patch+json', 'application/problem+json', 'application/ld+json', 'application/*', '*/*', 'json', 'application', 'application/', '/json', ''),
    headerText(40),
  );
  const parameters = fc.array(
    fc.oneof(
      fc.constantFrom('charset=utf-8', 'charset=UTF-8', 'charset="utf-8"', 'charset=latin1', 'charset=iso-8859-1', 'charset=utf-16', 'charset=utf-16le', 'charset=us-ascii', 'charset=', 'charset', 'boundary=x', ''),
      headerText(20),
    ),
    { maxLength: 3 },
  );
  const contentType = fc.tuple(mediaType, parameters, fc.constantFrom(';', '; ', ' ; ', ',')).map(([type, params, sep]) => [type, ...params].join(sep));

  it('any Content-Type with a valid body: 200 for JSON, a problem otherwise (415 for another media type)', async () => {
    await fc.assert(
      fc.asyncProperty(contentType, async (type) => {
        const response = await postEvaluate(t, VALID, { 'content-type': type });
        expectContract(response);
        const essence = type.split(/[;,]/)[0]!.trim().toLowerCase();
        if (['text/plain', 'text/json', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/jsonx'].includes(essence)) {
          expectProblem(response, 415, 'unsupported_media_type');
        }
        if (type === 'application/json' || /^application\/json; ?charset="?utf-8"?$/i.test(type)) expectEvaluation(response);
      }),
      fuzzOptions(1000),
    );
  });

  it('a JSON body in any encoding and declared charset: never a 5xx', async () => {
    const encoding = fc.constantFrom<BufferEncoding>('utf8', 'utf16le', 'latin1', 'ascii', 'ucs2', 'base64', 'hex');
    const charset = fc.constantFrom('', '; charset=utf-8', '; charset=utf-16', '; charset=latin1', '; charset=iso-8859-1', '; charset=x-unknown');
    const text = fc.constantFrom(VALID, JSON.stringify(evaluationBody({ email: '用户@例子.广告' })), JSON.stringify(evaluationBody({ email: 'jane@bücher.de', user: { first_name: 'Zoë' } })));
    await fc.assert(
      fc.asyncProperty(encoding, charset, text, fc.boolean(), async (enc, cs, body, bom) => {
        const bytes = Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(body, enc)]);
        const response = await postEvaluate(t, bytes, { 'content-type': `application/json${cs}` });
        expectContract(response);
        // UTF-8 (RFC 8259 §8.1) is read as UTF-8 whatever the label says.
        if (enc === 'utf8') expectEvaluation(response);
      }),
      fuzzOptions(500),
    );
  });

  it('no Content-Type at all: 415', async () => {
    const response = await t.app.inject({ method: 'POST', url: EVALUATE, headers: bearer(KEY_A), payload: VALID });
    expectProblem(response, 415, 'unsupported_media_type');
  });
});

describe('fuzz: Authorization', () => {
  const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'Token', 'Digest', '', 'Bearer:', 'Bearer\t');
  const credential = fc.oneof(
    fc.constantFrom(KEY_A, KEY_B, `${KEY_A} `, ` ${KEY_A}`, `${KEY_A}x`, KEY_A.slice(0, -1), KEY_A.toUpperCase(), `"${KEY_A}"`, `${KEY_A},${KEY_B}`, `${KEY_A} ${KEY_B}`, Buffer.from(KEY_A).toString('base64'), ''),
    fc.stringMatching(/^rk_[A-Za-z0-9_-]{43}$/),
    headerText(80),
  );
  const authorization = fc.tuple(scheme, fc.constantFrom(' ', '  ', '\t', ''), credential).map(([s, sep, c]) => `${s}${sep}${c}`);

  it('any Authorization value: 200 only for "Bearer <key>", otherwise 401 with WWW-Authenticate', async () => {
    await fc.assert(
      fc.asyncProperty(authorization, async (value) => {
        const response = await postEvaluate(t, VALID, { authorization: value });
        expectContract(response);
        const exact = [KEY_A, KEY_B].some((key) => new RegExp(`^bearer ${key}$`, 'i').test(value) && value.endsWith(key));
        if (exact) expectEvaluation(response);
        else if (response.statusCode !== 200) expectProblem(response, 401, 'unauthorized');
        // Anything that is not exactly one valid key after the scheme is refused.
        if (!value.includes(KEY_A) && !value.includes(KEY_B)) expect(response.statusCode).toBe(401);
      }),
      fuzzOptions(1000),
    );
  });

  it('very long headers of any name, also a very long Authorization: answered, never a 5xx', async () => {
    const size = fc.integer({ min: 1_000, max: 200_000 });
    const name = fc.constantFrom('authorization', 'x-forwarded-for', 'user-agent', 'cookie', 'x-request-id', 'accept', 'content-type');
    await fc.assert(
      fc.asyncProperty(name, size, async (header, n) => {
        const value = header === 'authorization' ? `Bearer ${'k'.repeat(n)}` : header === 'content-type' ? `application/json; x=${'a'.repeat(n)}` : 'v'.repeat(n);
        const response = await postEvaluate(t, VALID, { [header]: value });
        expectContract(response);
        if (header === 'authorization') expectProblem(response, 401, 'unauthorized');
        else expectEvaluation(response);
      }),
      fuzzOptions(100),
    );
  });

  it('many headers at once', async () => {
    const headers = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`x-h-${i}`, `v${i}`]));
    expectEvaluation(await postEvaluate(t, VALID, headers));
  });
});

describe('fuzz: methods, paths and query strings', () => {
  const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') as fc.Arbitrary<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS'>;
  const path = fc.oneof(
    fc.constantFrom(EVALUATE, '/v1/risk/evaluate/', '/V1/RISK/EVALUATE', '/v1/risk//evaluate', '/v1/risk/evaluate/..', '/v1/risk/./evaluate', '//v1/risk/evaluate', '/v1/risk/evaluate%00', '/v1/risk/%65valuate', '/v1/%zz', '/%', '/healthz', '/readyz', '/openapi.json', '/', '/v1', '/v2/risk/evaluate', '/__proto__', '/constructor/prototype'),
    fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)),
    fc.array(fc.string({ unit: 'binary', maxLength: 8 }), { maxLength: 4 }).map((segments) => `/${segments.map(encodeURIComponent).join('/')}`),
  );
  const query = fc.oneof(
    fc.constant(''),
    fc.webQueryParameters().map((q) => `?${q}`),
    fc.constantFrom('?__proto__[polluted]=1', '?constructor[prototype][polluted]=1', '?a=1&a=2&a=3', `?${'a=1&'.repeat(2000)}`, '?%zz', '?email=jane@example.com'),
  );

  it('any method on any path with any query: 200 only for a route that exists, otherwise a problem', async () => {
    await fc.assert(
      fc.asyncProperty(method, path, query, fc.boolean(), async (m, p, q, withBody) => {
        const url = `${p}${q}`;
        const response = await t.app.inject({
          method: m,
          url,
          headers: { ...bearer(KEY_A), ...(withBody ? { 'content-type': 'application/json' } : {}) },
          ...(withBody && m !== 'GET' && m !== 'HEAD' ? { payload: VALID } : {}),
        });
        expectContract(response, { method: m, url });
        if (p === EVALUATE && q === '' && ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].includes(m) && response.statusCode !== 415 && response.statusCode !== 400) {
          expectProblem(response, 405, 'method_not_allowed');
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      fuzzOptions(1500),
    );
  });

  it('OPTIONS on the evaluate route is 405 with Allow: POST, not a 404 that denies the route exists', async () => {
    const response = await t.app.inject({ method: 'OPTIONS', url: EVALUATE, headers: bearer(KEY_A) });
    expect(expectProblem(response, 405, 'method_not_allowed').detail).toContain('OPTIONS');
  });

  it('is healthy afterwards', async () => {
    await expectHealthy(t);
  });
});
