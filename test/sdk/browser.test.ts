import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import { SDK_DIST } from '../../scripts/build-sdk.js';
import { deviceIntelligenceSchema } from '../../src/request/evaluation-request.js';
import { launchChromium, recordRequests } from '../support/browser.js';

/**
 * The SDK in Debian's Chromium: what collect() returns, how stable and how distinct the hashes
 * are, that the page makes no request but its own, and that a blocked or hanging signal costs at
 * most the budget. One browser for the file; a context is one browser profile.
 */

/** What collect() resolves to: the request's device_intelligence, as the service's schema types it. */
type Result = z.infer<typeof deviceIntelligenceSchema>;

const PAGE = '<!doctype html><meta charset="utf-8"><title>sdk</title><script src="/device.js"></script><body>page</body>';
const MODULE_PAGE = '<!doctype html><meta charset="utf-8"><title>sdk</title><script type="module">import { collect } from "/device.mjs"; window.collectFromModule = collect;</script>';

let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  const files: Record<string, [string, Buffer | string]> = {
    '/': ['text/html', PAGE],
    '/module.html': ['text/html', MODULE_PAGE],
    '/device.js': ['text/javascript', readFileSync(join(SDK_DIST, 'device.js'))],
    '/device.mjs': ['text/javascript', readFileSync(join(SDK_DIST, 'device.mjs'))],
  };
  server = createServer((request, response) => {
    const file = files[request.url ?? ''];
    if (!file) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': file[0], 'cache-control': 'no-store' }).end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/**
 * A generous budget where the test is about the values, not the time: on a loaded 2-core runner a
 * signal can take longer than 500 ms, and one left out would change the hash. The budget itself is
 * tested below, on a controlled clock.
 */
const VALUES_BUDGET_MS = 10_000;

// Code that runs in the page is written as text: it is the page's JavaScript, not this file's TypeScript.
const collect = (page: Page, timeoutMs = VALUES_BUDGET_MS) => page.evaluate(`RiskDevice.collect({ timeoutMs: ${timeoutMs} })`) as Promise<Result>;
const collectFromModule = async (page: Page) => {
  await page.waitForFunction('"collectFromModule" in window');
  return page.evaluate(`collectFromModule({ timeoutMs: ${VALUES_BUDGET_MS} })`) as Promise<Result>;
};

async function withContext<T>(
  options: BrowserContextOptions,
  use: (context: BrowserContext, page: Page) => Promise<T>,
  prepare?: (context: BrowserContext) => Promise<void>,
): Promise<T> {
  const context = await browser.newContext(options);
  try {
    await prepare?.(context);
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    return await use(context, page);
  } finally {
    await context.close();
  }
}

/** collect() in a new profile with these emulation options, after `init` ran in the page. */
const collectIn = (options: BrowserContextOptions, init?: string): Promise<Result> =>
  withContext(options, (_context, page) => collect(page), async (context) => {
    if (init) await context.addInitScript(init);
  });

/** A default profile's result, collected once for the tests that compare with it. */
let baselineResult: Promise<Result> | undefined;
const baseline = () => (baselineResult ??= collectIn({}));

const HEX64 = /^[0-9a-f]{64}$/;

// A new profile starts a renderer process: about a second each on a loaded 2-core runner. The
// harness's time per test, not a bound on the SDK (its budget is tested on the page's clock).
vi.setConfig({ testTimeout: 60_000 });

describe('collect()', () => {
  it('resolves to exactly the spec’s device_intelligence fields, which the service accepts', async () => {
    const result = await baseline();
    expect(Object.keys(result).every((key) => key in deviceIntelligenceSchema.shape)).toBe(true);
    expect(result).toMatchObject({ device_hash: expect.stringMatching(HEX64), browser_hash: expect.stringMatching(HEX64), cookie_enabled: true });
    expect(result.device_hash).not.toBe(result.browser_hash);
    // Debian's headless Chromium on Linux, as its User-Agent and Client Hints say.
    expect(result).toMatchObject({ device_os: 'Linux', browser_name: 'HeadlessChrome', browser_version: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/) });
    expect(result.device_model).toBeUndefined();
    expect(deviceIntelligenceSchema.safeParse(result).success).toBe(true);
  });

  it('gives the same result from the ES module as from the classic script', async () => {
    await withContext({}, async (_context, page) => {
      const classic = await collect(page);
      await page.goto(`${origin}/module.html`);
      expect(await collectFromModule(page)).toEqual(classic);
    });
  });

  it('makes no request: the page loads itself and the script, nothing else', async () => {
    const context = await browser.newContext();
    try {
      const requests = await recordRequests(context);
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      await collect(page);
      await page.goto(`${origin}/module.html`);
      await collectFromModule(page);
      expect(requests).toEqual([`${origin}/`, `${origin}/device.js`, `${origin}/module.html`, `${origin}/device.mjs`]);
    } finally {
      await context.close();
    }
  });
});

describe('stability and distinctness of the hashes', () => {
  it('are the same across reloads and new tabs of one profile', async () => {
    const results = await withContext({}, async (context, page) => {
      const seen = [await collect(page)];
      for (let i = 0; i < 3; i++) {
        await page.reload();
        seen.push(await collect(page));
      }
      for (let i = 0; i < 2; i++) {
        const tab = await context.newPage();
        await tab.goto(`${origin}/`);
        seen.push(await collect(tab));
      }
      return seen;
    });
    expect(results).toHaveLength(6);
    for (const result of results) expect(result).toEqual(results[0]);
  });

  it('follow the device signals in device_hash and every emulated difference in browser_hash', async () => {
    // The default profile: a 1280x720 screen, UTC, en-US.
    const cases: Record<string, BrowserContextOptions> = {
      // Another profile of the same device: the device's signals, the same browser.
      'desktop, another profile': {},
      // The same device, another browser's User-Agent and language: a browser difference only.
      'desktop, another browser': { userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', locale: 'de-DE' },
      // Another screen and time zone: device signals.
      'another monitor and time zone': { viewport: { width: 1920, height: 1080 }, timezoneId: 'America/New_York' },
      phone: {
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 3,
        isMobile: true,
        hasTouch: true,
        userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
        timezoneId: 'Asia/Tokyo',
        locale: 'ja-JP',
      },
      tablet: {
        viewport: { width: 820, height: 1180 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
        userAgent: 'Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
        timezoneId: 'Europe/Berlin',
        locale: 'de-DE',
      },
    };
    // Side by side: each profile is its own renderer process.
    const results: Record<string, Result> = Object.fromEntries(
      await Promise.all([['desktop', await baseline()] as const, ...Object.entries(cases).map(async ([name, options]) => [name, await collectIn(options)] as const)]),
    );

    expect(results['desktop, another profile']).toEqual(results.desktop);
    expect(results['desktop, another browser']!.device_hash).toBe(results.desktop!.device_hash);
    expect(results['desktop, another browser']!.browser_hash).not.toBe(results.desktop!.browser_hash);
    // Emulation changes the User-Agent string, not the Client Hints, which still say Chromium: the
    // hints win, as they would over a User-Agent switcher.
    expect(results['desktop, another browser']).toMatchObject({ browser_name: 'Chromium' });
    const devices = ['desktop', 'another monitor and time zone', 'phone', 'tablet'];
    expect(new Set(devices.map((name) => results[name]!.device_hash)).size).toBe(devices.length);
    const browsers = [...devices, 'desktop, another browser'];
    expect(new Set(browsers.map((name) => results[name]!.browser_hash)).size).toBe(browsers.length);
    expect(results.phone).toMatchObject({ device_os: 'iOS 17.4', device_model: 'iPhone' });
    expect(results.tablet).toMatchObject({ device_os: 'Android 14', device_model: 'SM-X710' });
  });
});

describe('a blocked signal', () => {
  const noWebgl = `
    const getContext = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
      return /webgl/i.test(type) ? null : getContext.call(this, type, ...rest);
    };`;

  it('is left out: WebGL disabled gives other hashes, still well formed, never an error', async () => {
    const normal = await baseline();
    const blocked = await collectIn({}, noWebgl);
    expect(blocked).toMatchObject({ device_hash: expect.stringMatching(HEX64), browser_hash: expect.stringMatching(HEX64), browser_name: 'HeadlessChrome' });
    expect(blocked.device_hash).not.toBe(normal.device_hash);
    expect(blocked.browser_hash).not.toBe(normal.browser_hash);
  });

  it('that throws is left out like one that is missing', async () => {
    const throws = await collectIn({}, `Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get() { throw new Error('blocked by an extension'); } });`);
    const missing = await collectIn({}, `Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => undefined });`);
    expect(throws.device_hash).toMatch(HEX64);
    expect(throws).toEqual(missing);
  });

  it('that never answers costs the budget and no more, and is left out like one that is missing', async () => {
    const noAudio = await collectIn({}, 'delete window.OfflineAudioContext;');
    await withContext(
      {},
      async (_context, page) => {
        // Installed, the page's clock still runs with real time; paused, only runFor moves it.
        await page.clock.pauseAt(60_000);
        await page.evaluate('void RiskDevice.collect().then((result) => (window.done = result))');
        // 500 ms is the default budget.
        await page.clock.runFor(499);
        expect(await page.evaluate('window.done')).toBeUndefined();
        await page.clock.runFor(1);
        const hung = await (await page.waitForFunction('window.done')).jsonValue();
        expect(hung).toEqual(noAudio);
      },
      async (context) => {
        await context.clock.install({ time: 0 });
        await context.addInitScript('OfflineAudioContext.prototype.startRendering = () => new Promise(() => {});');
      },
    );
  });

  it('every signal blocked at once: collect() still resolves, with what it can tell', async () => {
    const result = await collectIn(
      {},
      `for (const name of ['hardwareConcurrency', 'deviceMemory', 'platform', 'maxTouchPoints', 'languages', 'userAgentData']) {
         Object.defineProperty(Navigator.prototype, name, { get() { throw new Error('blocked'); } });
       }
       Object.defineProperty(window, 'screen', { get() { throw new Error('blocked'); } });
       HTMLCanvasElement.prototype.getContext = () => null;
       Intl.DateTimeFormat = () => { throw new Error('blocked'); };
       delete window.OfflineAudioContext;`,
    );
    // Only the User-Agent string is left: a browser hash from it, no device hash (that would be everyone's).
    expect(result.device_hash).toBeUndefined();
    expect(result).toMatchObject({ browser_hash: expect.stringMatching(HEX64), browser_name: 'HeadlessChrome', cookie_enabled: true });
  });
});
