import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';

/** device_intelligence as the SDK sends it (test/sdk checks the SDK's own output against this schema). */
const digest = (text: string) => createHash('sha256').update(text).digest('hex');
const fromSdk = {
  device_hash: digest('device'),
  device_os: 'Windows 11',
  browser_hash: digest('browser'),
  browser_name: 'Chrome',
  browser_version: '131.0.6778.86',
  cookie_enabled: true,
};

let t: TestApp;
let withRule: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
  writeFileSync(join(rules, 'account_register.yaml'), 'rules:\n  - library: device_cookies_disabled\n');
  withRule = await startTestApp({ RULES_DIR: rules });
});
afterAll(async () => {
  await t?.app.close();
  await withRule?.app.close();
});

const evaluate = (app: TestApp, device_intelligence: unknown) =>
  app.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ device_intelligence }) });

describe('device_intelligence validation', () => {
  it('accepts what the SDK sends', async () => {
    expect((await evaluate(t, fromSdk)).statusCode).toBe(200);
  });

  it.each([
    ['a digest too short (SHA-1)', { device_hash: digest('x').slice(0, 40) }, 'device_intelligence.device_hash'],
    ['a digest too long', { device_hash: `${digest('x')}00` }, 'device_intelligence.device_hash'],
    ['upper-case hexadecimal', { browser_hash: digest('x').toUpperCase() }, 'device_intelligence.browser_hash'],
    ['a digest that is not hexadecimal', { browser_hash: `${digest('x').slice(0, 63)}g` }, 'device_intelligence.browser_hash'],
    ['a device_os of 129 characters', { device_os: 'W'.repeat(129) }, 'device_intelligence.device_os'],
    ['a device_model of 129 characters', { device_model: 'P'.repeat(129) }, 'device_intelligence.device_model'],
    ['a browser_name of 129 characters', { browser_name: 'C'.repeat(129) }, 'device_intelligence.browser_name'],
    ['a number for browser_version', { browser_version: 131 }, 'device_intelligence.browser_version'],
  ])('refuses %s, naming the field', async (_name, fields, path) => {
    const response = await evaluate(t, { ...fromSdk, ...fields });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = response.json();
    expect(body.code).toBe('invalid_request');
    expect(body.errors).toEqual([{ path, message: expect.any(String) }]);
  });

  it('says what a digest must look like', async () => {
    const body = (await evaluate(t, { device_hash: 'abc' })).json();
    expect(body.errors[0].message).toBe('must be 64 lower-case hexadecimal characters (a SHA-256 digest)');
  });

  it('accepts texts of 128 characters', async () => {
    expect((await evaluate(t, { device_os: 'W'.repeat(128), device_model: 'P'.repeat(128), browser_name: 'C'.repeat(128), browser_version: '1'.repeat(128) })).statusCode).toBe(200);
  });
});

describe('library rule device_cookies_disabled', () => {
  it('is a signal when cookies are off, whether or not the rule file enables it', async () => {
    const body = (await evaluate(t, { ...fromSdk, cookie_enabled: false })).json();
    expect(body.signals).toContain('device_cookies_disabled');
    expect(body.score.details).toEqual([]);
  });

  it('scores 10 when enabled: approve on its own', async () => {
    const body = (await evaluate(withRule, { ...fromSdk, cookie_enabled: false })).json();
    expect(body.score).toEqual({ details: [{ rule_id: 'device_cookies_disabled', rule_name: 'Browser has cookies disabled', rule_type: 'static', score: 10 }], fraud_score: 10, state: 'approve' });
  });

  it.each([
    ['cookies on', { ...fromSdk, cookie_enabled: true }],
    ['the field not sent', { device_hash: fromSdk.device_hash }],
    ['no device_intelligence at all', undefined],
  ])('does not fire with %s, and is not reported unavailable', async (_name, device) => {
    const body = (await evaluate(withRule, device)).json();
    expect(body.score.details).toEqual([]);
    expect(body.signals).not.toContain('device_cookies_disabled');
    expect(body.unavailable).not.toContain('rule:device_cookies_disabled');
  });
});
