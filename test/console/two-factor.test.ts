import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hotp, stepAt, totpAt } from '../../src/admin/totp.js';
import { createUser, PASSWORD } from '../support/admin.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, startConsoleServer, type ConsoleServer } from '../support/console.js';

/**
 * Two-factor in Debian's Chromium against the real service: enrol (the test computes codes from
 * the secret the page shows), log in with a code, a wrong and a replayed code refused, a recovery
 * code good once. The service keeps real time here, so a code for the next step (within the
 * accepted drift) stands in for waiting 30 s.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS * 2 });

const EMAIL = 'two.factor@console.test';
const SHOTS = process.env.SCREENSHOT_DIR;
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  server = await startConsoleServer();
  await createUser(server.store, EMAIL, { roles: { acme: 'analyst' } });
  browser = await launchChromium();
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

describe('two-factor in the console', () => {
  it('enrols with the QR code, logs in with a code, refuses a wrong or replayed one, takes a recovery code once', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, EMAIL);
      await page.getByRole('link', { name: 'Two-factor' }).click();
      await page.getByRole('button', { name: 'Set up two-factor' }).click();
      const qr = page.getByRole('img', { name: 'QR code for the authenticator app' });
      await qr.waitFor();
      await expectNoAxeViolations(page, 'Two-factor, enrolment');
      // Drawn by the service, shown under the console's CSP: it loaded.
      expect(await qr.evaluate((img) => { const loaded = img as unknown as { complete: boolean; naturalWidth: number }; return loaded.complete && loaded.naturalWidth > 0; })).toBe(true);
      const secret = (await page.getByLabel('Secret key').innerText()).trim();
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/two-factor-enrol.png`, fullPage: true });
      const wrong = totpAt(secret, Date.now()) === '000000' ? '111111' : '000000';
      await page.getByLabel('Code from the app').fill(wrong);
      await page.getByRole('button', { name: 'Turn on two-factor' }).click();
      await page.getByText('does not match').waitFor();
      await page.getByLabel('Code from the app').fill(totpAt(secret, Date.now()));
      await page.getByRole('button', { name: 'Turn on two-factor' }).click();
      await page.getByRole('heading', { name: 'Two-factor is on: save your recovery codes' }).waitFor();
      await expectNoAxeViolations(page, 'Two-factor, recovery codes');
      const codes = await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allInnerTexts();
      expect(codes).toHaveLength(10);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/two-factor-recovery-codes.png`, fullPage: true });
      await page.getByRole('button', { name: 'I saved them' }).click();
      await page.getByText('Two-factor is on').waitFor();
      await page.getByRole('button', { name: 'Log out' }).click();

      const passwordStep = async () => {
        await page.getByLabel('E-mail address').fill(EMAIL);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Log in' }).click();
      };
      // The right password alone asks for the code.
      await passwordStep();
      const codeField = page.getByLabel('Code from your authenticator app');
      await codeField.waitFor();
      await expectNoAxeViolations(page, 'Log in, the code step');
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/two-factor-login.png`, fullPage: true });
      await codeField.fill(wrong);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('Wrong code, or one already used').waitFor();
      // The next step's code: later than the one that confirmed the enrolment.
      const code = hotp(secret, stepAt(Date.now()) + 1);
      await codeField.fill(code);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('button', { name: 'Log out' }).click();

      // The same code again: refused, though still within its window.
      await passwordStep();
      await codeField.fill(code);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('Wrong code, or one already used').waitFor();
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByLabel('Recovery code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('button', { name: 'Log out' }).click();

      // The recovery code, once only.
      await passwordStep();
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByLabel('Recovery code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('Unknown or already used recovery code').waitFor();
      await page.getByLabel('Recovery code').fill(codes[1]!);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('button', { name: 'Log out' }).waitFor();

      expect(troubles).toEqual([]);
      expect(requests.every((url) => url.startsWith(server.origin))).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('lets an owner require two-factor of a user and reset their authenticator, confirmed and audited', async () => {
    const email = 'lost.phone@console.test';
    const user = await createUser(server.store, email, { roles: { acme: 'analyst' } });
    await server.store.secondFactors.startTotp(user.id, 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', Date.now());
    await server.store.secondFactors.confirmTotp(user.id, 1, ['sha256-of-a-recovery-code'], Date.now());
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByRole('link', { name: 'Users' }).click();
      const row = page.getByRole('row').filter({ hasText: email }).filter({ hasText: 'acme (analyst)' });
      await row.getByRole('cell', { name: 'on', exact: true }).waitFor();

      await row.getByRole('button', { name: `Require two-factor of ${email}` }).click();
      await row.getByRole('cell', { name: 'on, required' }).waitFor();
      expect((await server.store.users.get(user.id))!.two_factor_required).toBe(true);

      await row.getByRole('button', { name: `Reset two-factor of ${email}` }).click();
      const dialog = page.getByRole('dialog', { name: `Reset two-factor of ${email}?` });
      await dialog.waitFor();
      await expectNoAxeViolations(page, 'Users, reset two-factor');
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/two-factor-reset.png`, fullPage: true });
      await dialog.getByRole('button', { name: 'Reset two-factor' }).click();
      await row.getByRole('cell', { name: 'off, required' }).waitFor();
      expect(await row.getByRole('button', { name: `Reset two-factor of ${email}` }).count()).toBe(0);
      expect((await server.store.audit({}))[0]).toMatchObject({ action: 'user.totp.reset', target: user.id, actor: expect.stringMatching(/^user:usr_/) });

      expect(troubles).toEqual([]);
      expect(requests.every((url) => url.startsWith(server.origin))).toBe(true);
    } finally {
      await context.close();
    }
  });
});
