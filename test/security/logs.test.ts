import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggablePath } from '../../src/http/request-log.js';
import { bearer, evaluationBody, KEY_A, KEY_B, startTestApp, type TestApp } from '../support/app.js';

/**
 * Keys and e-mail addresses are secrets and personal data: whatever spot a client puts them in,
 * and whether or not the request is valid, no log line may carry them. Logging runs at `trace`, so
 * every line any level would write is inspected.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'trace' });
});
afterAll(async () => {
  await t.app.close();
});

const PATH = '/v1/risk/evaluate';

async function send(options: { url?: string; method?: 'POST' | 'GET'; headers?: Record<string, string>; payload?: string | object }) {
  const response = await t.app.inject({
    method: options.method ?? 'POST',
    url: options.url ?? PATH,
    headers: { 'content-type': 'application/json', ...options.headers },
    payload: typeof options.payload === 'object' ? JSON.stringify(options.payload) : options.payload,
  });
  // Every request writes its one line before inject resolves; a request that wrote none would
  // make "the secret is not in the log" vacuous.
  expect(response.statusCode).toBeGreaterThanOrEqual(200);
  return response;
}

/** Each secret as it would appear in a JSON log line: raw, and JSON-escaped. */
function expectNotLogged(...secrets: string[]) {
  expect(t.logs.raw.length).toBeGreaterThan(0);
  const all = t.logs.raw.join('\n');
  for (const secret of secrets) {
    expect(all).not.toContain(secret);
    expect(all).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(all).not.toContain(encodeURIComponent(secret));
  }
}

const wrongKey = 'rk_' + 'Wr0ngKeyCanary'.repeat(4);

describe('API keys never reach the log', () => {
  it.each([
    ['a valid key in the header', { headers: bearer(KEY_A), payload: evaluationBody() }],
    ['a valid key, lower-case scheme', { headers: { authorization: `bearer ${KEY_B}` }, payload: evaluationBody() }],
    ['a wrong key in the header', { headers: bearer(wrongKey), payload: evaluationBody() }],
    ['a key without a scheme', { headers: { authorization: KEY_A }, payload: evaluationBody() }],
    ['a key in a Basic credential', { headers: { authorization: `Basic ${Buffer.from(`u:${KEY_A}`).toString('base64')}` }, payload: evaluationBody() }],
    ['a key in another header', { headers: { ...bearer(KEY_A), 'x-api-key': KEY_B }, payload: evaluationBody() }],
    ['a key in the query string', { url: `${PATH}?api_key=${KEY_A}`, headers: bearer(KEY_B), payload: evaluationBody() }],
    ['a key in the query string, unauthenticated', { url: `${PATH}?key=${KEY_A}`, payload: evaluationBody() }],
    ['a key in the path of a 404', { url: `/v1/${KEY_A}`, headers: bearer(KEY_B) }],
    ['a key as a path segment of a 405', { url: `/v1/risk/evaluate/${KEY_A}`, method: 'GET' as const, headers: bearer(KEY_B) }],
    ['a key in the body', { headers: bearer(KEY_B), payload: evaluationBody({ api_key: KEY_A }) }],
    ['a key as the e-mail', { headers: bearer(KEY_B), payload: evaluationBody({ email: KEY_A }) }],
    ['a key as the event type', { headers: bearer(KEY_B), payload: evaluationBody({ event_type: KEY_A.slice(0, 60) }) }],
    ['a key in malformed JSON', { headers: bearer(KEY_B), payload: `{"key": "${KEY_A}",,}` }],
    ['a key in the Content-Type', { headers: { ...bearer(KEY_B), 'content-type': `text/plain; key=${KEY_A}` }, payload: 'x' }],
  ])('%s', async (_name, request) => {
    await send(request);
    expectNotLogged(KEY_A, KEY_B, wrongKey);
  });

  it('property: a key anywhere in the URL, headers or body never appears in a log line', async () => {
    const spot = fc.constantFrom('authorization', 'query', 'path', 'header', 'body', 'email');
    const key = fc.stringMatching(/^[A-Za-z0-9_-]{32,64}$/);
    await fc.assert(
      fc.asyncProperty(spot, key, fc.boolean(), async (where, secret, authenticated) => {
        const headers: Record<string, string> = authenticated ? bearer(KEY_A) : {};
        let url = PATH;
        let payload: object = evaluationBody();
        if (where === 'authorization') headers.authorization = `Bearer ${secret}`;
        if (where === 'query') url = `${PATH}?token=${secret}`;
        if (where === 'path') url = `/v1/risk/${secret}`;
        if (where === 'header') headers['x-api-key'] = secret;
        if (where === 'body') payload = evaluationBody({ token: secret });
        if (where === 'email') payload = evaluationBody({ email: `${secret}@example.com` });
        const before = t.logs.raw.length;
        await send({ url, headers, payload });
        expect(t.logs.raw.length).toBeGreaterThan(before);
        const written = t.logs.raw.slice(before).join('\n');
        expect(written).not.toContain(secret);
      }),
      { numRuns: 300 },
    );
  });
});

describe('e-mail addresses never reach the log', () => {
  const canary = (n: number) => `leak.canary.${n}`;

  it.each([
    ['a valid address', canary(1), (local: string) => `${local}@example.com`],
    ['an internationalised address', 'lëak.cänary.用户', (local: string) => `${local}@bücher.de`],
    ['an address with two @', canary(2), (local: string) => `${local}@x@example.com`],
    ['an address with a bad domain', canary(3), (local: string) => `${local}@-bad-.com`],
    ['an address over 254 characters', canary(4), (local: string) => `${local}@${'d'.repeat(250)}.com`],
    ['an address with a control character', canary(5), (local: string) => `${local}\u0000@example.com`],
  ])('%s', async (_name, local, address) => {
    const email = address(local);
    await send({ headers: bearer(KEY_A), payload: evaluationBody({ email }) });
    // And beside another invalid field, so validation fails for a different reason too.
    await send({ headers: bearer(KEY_A), payload: evaluationBody({ email, ip: 'not-an-ip' }) });
    expectNotLogged(email, local);
  });

  it('an address in the query string, the path, a user field or broken JSON', async () => {
    const email = `${canary(6)}@example.com`;
    await send({ url: `${PATH}?email=${email}`, headers: bearer(KEY_A), payload: evaluationBody() });
    await send({ url: `/v1/${email}`, headers: bearer(KEY_A) });
    await send({ url: `/v1/${encodeURIComponent(email)}`, headers: bearer(KEY_A) });
    await send({ headers: bearer(KEY_A), payload: evaluationBody({ user: { first_name: email } }) });
    await send({ headers: bearer(KEY_A), payload: `{"email": "${email}", }` });
    expectNotLogged(email, canary(6));
  });

  it('logs the domain of a valid address, which is what an operator needs', async () => {
    const before = t.logs.lines.length;
    const from = Date.now();
    await send({ headers: bearer(KEY_A), payload: evaluationBody({ email: `${canary(7)}@Example.ORG` }) });
    const line = t.logs.lines.slice(before).find((l) => l.msg === 'evaluation');
    expect(line).toMatchObject({ evaluation: { email_domain: 'example.org' }, status: 200 });
    // Its time, ISO, within the request.
    const time = line!.time as string;
    expect(new Date(time).toISOString()).toBe(time);
    expect(Date.parse(time)).toBeGreaterThanOrEqual(from);
    expect(Date.parse(time)).toBeLessThanOrEqual(Date.now());
  });
});

describe('loggablePath', () => {
  it.each([
    ['/v1/risk/evaluate', '/v1/risk/evaluate'],
    ['/v1/risk/evaluate?api_key=abc', '/v1/risk/evaluate?[redacted]'],
    [`/v1/${'k'.repeat(32)}/x`, '/v1/[redacted]/x'],
    ['/v1/jane@example.com', '/v1/[redacted]'],
    ['/v1/jane%40example.com', '/v1/[redacted]'],
    ['/healthz', '/healthz'],
  ])('%s -> %s', (url, expected) => {
    expect(loggablePath(url)).toBe(expected);
  });
});
