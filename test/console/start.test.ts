import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { generateKey, hashKey, keyIdOf } from '../../src/keys/key.js';
import { createUser } from '../support/admin.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { startTestApp } from '../support/app.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, openDataSources, OWNER, useConsoleInChromium } from '../support/console.js';

/**
 * The Getting started page as a newcomer sees it, in Debian's Chromium: commands that can be read
 * (their text's contrast against the background Chromium paints), snippets for curl, Node.js and
 * Python, a test event, and which default rules cannot fire on this server and what fixes them; the
 * Data sources page gives the same advice per source. (This server has no Tor or proxy list.)
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });

const ctx = useConsoleInChromium();

/** WCAG 2 contrast ratio of each command's text colour against its block's background colour, as computed. */
const commandContrasts = (page: Page) =>
  page.$$eval('.command pre', (blocks) => {
    const luminance = (color: string) => {
      const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number).map((v) => v / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    // In the page (the tests' tsconfig has no DOM library, so its global is typed here).
    const { getComputedStyle } = globalThis as unknown as { getComputedStyle(element: unknown): { color: string; backgroundColor: string } };
    return blocks.map((pre) => {
      const text = luminance(getComputedStyle(pre.querySelector('code') ?? pre).color);
      const background = luminance(getComputedStyle(pre).backgroundColor);
      return (Math.max(text, background) + 0.05) / (Math.min(text, background) + 0.05);
    });
  });

describe('Getting started', () => {
  it('shows readable snippets, sends a test event, and says which default rules cannot fire yet and the command that fixes each', async () => {
    const { context, page, troubles } = await openConsole(ctx.browser, ctx.server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByLabel('Account').selectOption('acme');
      await page.getByRole('heading', { name: 'Getting started' }).waitFor();

      for (const name of ['curl', 'Node.js', 'Python']) await page.getByRole('heading', { name, exact: true }).waitFor();
      const contrasts = await commandContrasts(page);
      expect(contrasts.length).toBeGreaterThanOrEqual(3);
      // WCAG AAA for body text: 7:1.
      for (const ratio of contrasts) expect(ratio).toBeGreaterThanOrEqual(7);
      // axe: aria-label is prohibited on a plain <pre>.
      expect(await page.locator('pre[aria-label]').count()).toBe(0);

      const notice = page.getByRole('note');
      await notice.getByRole('heading', { name: /^2 default rules cannot fire yet: (ip_tor, ip_proxy|ip_proxy, ip_tor)$/ }).waitFor();
      const advice = await notice.innerText();
      expect(advice).toContain('ip.tor: No Tor exit list is loaded. Run:\nnpm run data:update');
      expect(advice).toContain('MAXMIND_LICENSE_KEY');
      expect(advice).toContain('GeoIP2-Anonymous-IP');

      await page.getByRole('button', { name: 'Send a test event' }).click();
      await expect(page.locator('.test-answer strong').getAttribute('data-state')).resolves.toMatch(/^(approve|review|decline)$/);

      // To look at it: SCREENSHOT_START=/tmp/start.png npx vitest run test/console/start.test.ts
      if (process.env.SCREENSHOT_START) await page.screenshot({ path: process.env.SCREENSHOT_START, fullPage: true });
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('the development key', () => {
  it('has its own row in the key table, named as what it is, and is not counted as an API_KEYS key', async () => {
    // As server.ts starts in development with no API_KEYS and no stored key: it makes the key.
    const made = generateKey();
    const { app } = await startTestApp({ API_KEYS: '' }, {}, { developmentKey: () => made, developmentKeyFile: { file: '.dev-api-key', key: null } });
    try {
      await createUser(app.store, OWNER, { owner: true });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { context, page, troubles } = await openConsole(ctx.browser, `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
      try {
        await logIn(page, OWNER);
        await page.getByLabel('Account').selectOption('default');
        await page.getByRole('heading', { name: 'Getting started' }).waitFor();
        const row = page.getByRole('row').filter({ hasText: 'development key' });
        const text = await row.innerText();
        expect(text).toContain(`${made.slice(0, 9)}…`);
        expect(text).toContain(keyIdOf(hashKey(made)));
        expect(text).toContain('cat .dev-api-key');
        expect(text).not.toContain(made);
        await expect(page.getByText('No key in the store yet.').count()).resolves.toBe(0);
        await expect(page.getByText(/from the server's API_KEYS variable/).count()).resolves.toBe(0);
        await expectNoAxeViolations(page, 'Getting started, the development key');
        // To look at it: SCREENSHOT_DEV_KEY=/tmp/dev-key.png npx vitest run test/console/start.test.ts
        if (process.env.SCREENSHOT_DEV_KEY) await page.locator('section.card').first().screenshot({ path: process.env.SCREENSHOT_DEV_KEY });
        expect(troubles).toEqual([]);
      } finally {
        await context.close();
      }
    } finally {
      await app.close();
    }
  });
});

describe('Data sources', () => {
  it('says, for a source that is not loaded, the command that loads it', async () => {
    const { context, page, troubles } = await openConsole(ctx.browser, ctx.server.origin);
    try {
      await logIn(page, OWNER);
      await openDataSources(page);
      const tor = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /ip\.list\.tor/ }) });
      await expect(tor.innerText()).resolves.toContain('not loaded');
      // The advice, on the row under the source's.
      await expect(tor.locator('xpath=following-sibling::tr[1]').innerText()).resolves.toBe('No Tor exit list is loaded. Run:\nnpm run data:update\nIt fetches tor-exit-nodes.txt into DATA_DIR; the service reads it within seconds, no restart.');
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
