import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdk, MAX_GZIP_BYTES, SDK_DIST, sriOf } from '../../scripts/build-sdk.js';
import { sdkVersion } from '../../src/http/routes/sdk.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.app.close();
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
const built = (file: string) => readFileSync(join(SDK_DIST, file));
const version = sdkVersion();

describe('GET /sdk/v1/device.js and device.mjs', () => {
  it.each([
    ['/sdk/v1/device.js', 'device.js', 'public, max-age=86400'],
    ['/sdk/v1/device.mjs', 'device.mjs', 'public, max-age=86400'],
    [`/sdk/v${version}/device.js`, 'device.js', 'public, max-age=31536000, immutable'],
    [`/sdk/v${version}/device.mjs`, 'device.mjs', 'public, max-age=31536000, immutable'],
  ])('%s: the built file, for any origin, cached', async (url, file, cacheControl) => {
    const response = await get(url);
    expect(response.statusCode).toBe(200);
    expect(response.rawPayload.equals(built(file))).toBe(true);
    expect(response.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': cacheControl,
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
      vary: 'Accept-Encoding',
      etag: expect.stringMatching(/^"[\w-]{27}"$/),
    });
    expect(response.headers['content-encoding']).toBeUndefined();
  });

  it('needs no key', async () => {
    expect((await get('/sdk/v1/device.js', { authorization: 'Bearer wrong' })).statusCode).toBe(200);
  });

  it.each([
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.8', true],
    ['*', true],
    ['gzip;q=0', false],
    ['identity', false],
  ])('Accept-Encoding: %s → gzip %s', async (acceptEncoding, gzipped) => {
    const response = await get('/sdk/v1/device.js', { 'accept-encoding': acceptEncoding });
    expect(response.headers['content-encoding']).toBe(gzipped ? 'gzip' : undefined);
    const body = gzipped ? gunzipSync(response.rawPayload) : response.rawPayload;
    expect(body.equals(built('device.js'))).toBe(true);
  });

  it('answers 304 to a matching If-None-Match, 200 to another', async () => {
    const { etag } = (await get('/sdk/v1/device.js')).headers;
    const notModified = await get('/sdk/v1/device.js', { 'if-none-match': `"other", W/${etag}` });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.rawPayload.length).toBe(0);
    expect((await get('/sdk/v1/device.js', { 'if-none-match': '"other"' })).statusCode).toBe(200);
  });

  it('answers HEAD without a body', async () => {
    const response = await t.app.inject({ method: 'HEAD', url: '/sdk/v1/device.mjs' });
    expect(response.statusCode).toBe(200);
    expect(response.rawPayload.length).toBe(0);
  });

  it('refuses other methods with 405 and Allow, and unknown versions or files with 404', async () => {
    const post = await t.app.inject({ method: 'POST', url: '/sdk/v1/device.js' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.json().code).toBe('method_not_allowed');
    for (const url of ['/sdk/v2/device.js', '/sdk/v1/device.ts', '/sdk/v1/../package.json', '/sdk/v1/%2e%2e/package.json']) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
  });
});

describe('the SDK build', () => {
  it(`is reproducible, under ${MAX_GZIP_BYTES} bytes gzipped, and the README's integrity hashes are those of the built files`, async () => {
    const readme = readFileSync('README.md', 'utf8');
    // Into a directory of its own: other test files read sdk/dist while this runs.
    const outdir = mkdtempSync(join(tmpdir(), 'risk-sdk-'));
    for (const file of await buildSdk(outdir)) {
      expect(readFileSync(join(outdir, file.file)).equals(built(file.file)), file.file).toBe(true);
      expect(file.gzipBytes, file.file).toBeLessThan(MAX_GZIP_BYTES);
      expect(file.integrity).toBe(sriOf(built(file.file)));
      // If this fails after a change to sdk/src: `npm run build:sdk` prints the new hashes for the README.
      expect(readme, `README integrity of ${file.file}`).toContain(`integrity="${file.integrity}"`);
    }
  });
});
