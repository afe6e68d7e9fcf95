import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONSOLE_CSP } from '../../src/http/routes/console.js';
import { createUser } from '../support/admin.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, startConsoleServer, type ConsoleServer } from '../support/console.js';

/**
 * How the console is served (files, CSP, caching), that every page renders with no error under
 * that CSP, and that attacker-controlled text (an e-mail address) is shown as text.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });

const HOSTILE = '<img src=x onerror=alert(1)>@x.test';
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  server = await startConsoleServer();
  await createUser(server.store, HOSTILE, { roles: { acme: 'analyst' } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

describe('serving', () => {
  it('redirects /console to /console/, sends the page with the CSP and no cache, assets cached for a year', async () => {
    const redirect = await server.app.inject({ url: '/console' });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/console/');

    const page = await server.app.inject({ url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.body).not.toMatch(/<script>|<script(?![^>]*src=)[^>]*>/);

    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page.body)![1]!;
    const script = await server.app.inject({ url: asset });
    expect(script.statusCode).toBe(200);
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['content-security-policy']).toBe(CONSOLE_CSP);
  });

  it('answers a missing file, or a path out of the folder, with a problem', async () => {
    for (const url of ['/console/nope.js', '/console/../package.json', '/console/%2e%2e/package.json']) {
      const answer = await server.app.inject({ url });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.headers['content-type'], url).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('every page, as an owner', () => {
  it('renders its heading under the CSP with no error, no request off this origin and no axe-core violation', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await page.getByRole('button', { name: 'Log in' }).waitFor();
      await expectNoAxeViolations(page, 'Log in');
      const entries = await page.evaluate('history.length');
      await logIn(page, OWNER);
      // Signed in at /console/, the first account goes in the URL in place of the bare address: no
      // history entry that Back would land on only to be sent forward again.
      await page.waitForURL(`${server.origin}/console/#/acme/start`);
      expect(await page.evaluate('history.length')).toBe(entries);
      for (const [link, heading] of [['Decisions', 'Decisions'], ['Threat rules', 'Threat rules'], ['Lists', 'Lists'], ['Users', 'Users'], ['Data sources', 'Data sources'], ['Audit log', 'Audit log'], ['Getting started', 'Getting started']] as const) {
        await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: link }).click();
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await expectNoAxeViolations(page, heading);
      }
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('cell', { name: 'account.create' }).first().waitFor();
      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('attacker-controlled text', () => {
  it('shows a hostile e-mail address as text: no element made from it, no script run', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/users`);
      await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
      await page.getByRole('cell', { name: HOSTILE, exact: true }).first().waitFor();
      await expect(page.locator('main img').count()).resolves.toBe(0);
      await expect(page.locator('img[src="x"]').count()).resolves.toBe(0);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
