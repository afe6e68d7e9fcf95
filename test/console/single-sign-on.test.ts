import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser } from '../support/admin.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, openConsole, startConsoleServer, type ConsoleServer } from '../support/console.js';
import { freePort, startTestProvider, type TestProvider } from '../support/oidc.js';

/**
 * "Sign in with <provider>" in Debian's Chromium, end to end: the console's button, the real
 * provider's page (oidc-provider on loopback, named `localhost` so that it is another site than
 * the service on 127.0.0.1 and the browser's SameSite rules are the real ones), back to the console
 * signed in; and a person the provider knows but no console user is, told so on the login page.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS * 2 });

const SHOTS = process.env.SCREENSHOT_DIR;
let provider: TestProvider;
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  provider = await startTestProvider({ erin: { email: 'erin@console.test' }, stranger: { email: 'stranger@elsewhere.test' } }, { hostname: 'localhost' });
  const port = await freePort();
  const redirect = `http://127.0.0.1:${port}/admin/v1/oidc/callback`;
  provider.serve(redirect);
  server = await startConsoleServer({
    port,
    env: { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, OIDC_REDIRECT_URL: redirect, OIDC_NAME: 'Test SSO' },
  });
  await createUser(server.store, 'erin@console.test', { roles: { acme: 'analyst' } });
  browser = await launchChromium();
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
  await provider?.close();
});

describe('single sign-on in the console', () => {
  it('signs in through the provider and back to the console', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      const button = page.getByRole('link', { name: 'Sign in with Test SSO' });
      await button.waitFor();
      await expectNoAxeViolations(page, 'Log in, with single sign-on');
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/sso-login.png`, fullPage: true });

      await button.click();
      await page.getByRole('heading', { name: 'Test provider' }).waitFor();
      expect(new URL(page.url()).origin).toBe(provider.issuer);
      await page.getByLabel('Login').fill('erin');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Log out' }).waitFor();
      // The console puts the first account in the URL as it shows the shell; the browser tells
      // Playwright of that change on its own, so wait for it rather than read it at once.
      await page.waitForURL(`${server.origin}/console/#/acme/start`);
      await expect.poll(async () => (await server.store.audit({}))[0]?.action).toBe('user.sso_login');
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('link', { name: 'Sign in with Test SSO' }).waitFor();
      expect(troubles).toEqual([]);
      expect(requests.filter((url) => !url.startsWith(server.origin) && !url.startsWith(provider.issuer))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('tells someone the provider knows but no owner added why they are not signed in', async () => {
    // Another person, another browser: the provider's own session for the first one is not here.
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await page.getByRole('link', { name: 'Sign in with Test SSO' }).click();
      await page.getByLabel('Login').fill('stranger');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const refusal = page.getByRole('alert');
      await refusal.waitFor();
      await page.getByRole('link', { name: 'Sign in with Test SSO' }).waitFor();
      expect(await refusal.innerText()).toContain('Test SSO signed you in, but no console user has that e-mail address');
      // The reason is read once: the address bar no longer carries it.
      expect(page.url()).toBe(`${server.origin}/console/`);
      await expectNoAxeViolations(page, 'Log in, single sign-on refused');
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/sso-unknown-user.png`, fullPage: true });

      expect(troubles).toEqual([]);
      expect(requests.filter((url) => !url.startsWith(server.origin) && !url.startsWith(provider.issuer))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
