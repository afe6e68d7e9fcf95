import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDemoBackend, type DemoOptions } from '../../demo/backend.js';
import { SDK_DIST, sriOf } from '../../scripts/build-sdk.js';
import { sdkVersion } from '../../src/http/routes/sdk.js';
import { launchChromium, recordRequests } from '../support/browser.js';
import { KEY_A, startTestApp, type TestApp } from '../support/app.js';

/**
 * The demo end to end: the page loads the SDK from the service (cross-origin, pinned by its
 * integrity hash), the form posts to the demo backend, which evaluates the sign-up with the
 * service's key and renders the decision with its reasons.
 */

// A new browser page starts a renderer process: seconds on a loaded 2-core runner. The harness's
// time per test, not a bound on the demo.
vi.setConfig({ testTimeout: 60_000 });

let service: TestApp;
let serviceUrl: string;
let browser: Browser;
const demos: FastifyInstance[] = [];

const sdk = { path: `/sdk/v${sdkVersion()}/device.js`, integrity: sriOf(readFileSync(join(SDK_DIST, 'device.js'))) };

async function startDemo(options: Partial<DemoOptions> = {}): Promise<{ demo: FastifyInstance; url: string }> {
  const demo = createDemoBackend({ service: { url: serviceUrl, apiKey: KEY_A }, sdk, ...options });
  demos.push(demo);
  return { demo, url: await demo.listen({ host: '127.0.0.1', port: 0 }) };
}

beforeAll(async () => {
  service = await startTestApp();
  serviceUrl = await service.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(demos.map((demo) => demo.close()));
  await service?.app.close();
});

const evaluationsLogged = () => service.logs.lines.filter((line) => line.url === '/v1/risk/evaluate' && line.status === 200).length;

describe('the sign-up demo in Chromium', () => {
  it('loads the SDK from the service, and the sign-up reaches the service and renders the decision', async () => {
    const { url } = await startDemo();
    const context = await browser.newContext();
    try {
      const requests = await recordRequests(context);
      const page = await context.newPage();
      await page.goto(url);
      await page.fill('#first_name', 'Jo');
      await page.fill('#email', 'jo@mailinator.com');
      const before = evaluationsLogged();
      await Promise.all([page.waitForURL('**/signup'), page.click('button[type=submit]')]);

      expect(await page.locator('[data-state]').getAttribute('data-state')).toBe('decline');
      expect(await page.locator('.state').textContent()).toBe('Declined: the sign-up is blocked');
      expect(await page.locator('#reasons td').allTextContents()).toEqual(['Email address is disposable', '+40']);
      const sent = JSON.parse((await page.locator('#sent').textContent()) ?? '');
      expect(sent).toMatchObject({ ip: '127.0.0.1', email: 'jo@mailinator.com', event_type: 'account_register' });
      expect(sent.device_intelligence).toMatchObject({ device_hash: expect.stringMatching(/^[0-9a-f]{64}$/), browser_name: 'HeadlessChrome', cookie_enabled: true });
      expect(evaluationsLogged()).toBe(before + 1);
      // The page, the SDK from the service, the page's script, the form: nothing else, nowhere else.
      expect(requests).toEqual([`${url}/`, `${serviceUrl}${sdk.path}`, `${url}/signup.js`, `${url}/signup`]);
    } finally {
      await context.close();
    }
  });

  it('signs up without device data when the SDK does not load (here: its integrity does not match)', async () => {
    const { url } = await startDemo({ sdk: { ...sdk, integrity: 'sha384-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    const page = await browser.newPage();
    try {
      await page.goto(url);
      await page.fill('#email', 'jane.doe@example.com');
      await Promise.all([page.waitForURL('**/signup'), page.click('button[type=submit]')]);
      expect(await page.locator('[data-state]').getAttribute('data-state')).toBe('approve');
      expect(JSON.parse((await page.locator('#sent').textContent()) ?? '').device_intelligence).toBeNull();
    } finally {
      await page.close();
    }
  });
});

describe('the demo backend', () => {
  const form = (fields: Record<string, string>) => ({
    method: 'POST' as const,
    url: '/signup',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });

  it('evaluates as the address the demo settings give, and forwards only the SDK’s fields', async () => {
    const { demo } = await startDemo();
    const device = { device_hash: 'a'.repeat(64), cookie_enabled: false, injected: '<script>' };
    const response = await demo.inject(form({ email: 'jo@example.com', demo_ip: '81.2.69.160', device_intelligence: JSON.stringify(device) }));
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('data-state="approve"');
    expect(response.body).toContain('&quot;ip&quot;: &quot;81.2.69.160&quot;');
    expect(response.body).toContain('&quot;cookie_enabled&quot;: false');
    expect(response.body).not.toContain('injected');
  });

  it('shows the field the service refused', async () => {
    const { demo } = await startDemo();
    const response = await demo.inject(form({ email: 'jo@' }));
    expect(response.body).toContain('<code>email</code>');
  });

  it('holds the sign-up for review when the service cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const { demo } = await startDemo({ service: { url: `http://127.0.0.1:${port}`, apiKey: KEY_A } });
    const response = await demo.inject(form({ email: 'jo@example.com' }));
    expect(response.body).toContain('The risk service could not be reached: the sign-up is held for review.');
  });

  it('escapes what the user typed', async () => {
    const { demo } = await startDemo();
    const response = await demo.inject(form({ email: '"><img src=x>@mailinator.com' }));
    expect(response.body).not.toContain('<img src=x>');
  });
});
