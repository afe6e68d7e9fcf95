import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser } from '../support/admin.js';
import { evaluationBody } from '../support/app.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, startConsoleServer, type ConsoleServer } from '../support/console.js';

/**
 * The console's first run in Debian's Chromium, against the real service on a loopback port: log
 * in, make a key, copy it, evaluate with it (with the very curl command the page shows), rotate
 * and revoke it with the confirmations, an analyst's read-only view, and logging out.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });

let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  server = await startConsoleServer();
  await createUser(server.store, 'analyst@console.test', { roles: { acme: 'analyst' } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

const evaluate = (key: string) =>
  fetch(`${server.origin}/v1/risk/evaluate`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(evaluationBody()) });

describe('getting started, as an owner', () => {
  it('makes a key shown once, copies it, and the curl the page shows evaluates with it', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByLabel('Account').selectOption('acme');
      await page.getByRole('heading', { name: 'Getting started' }).waitFor();
      await page.getByRole('cell', { name: 'No key in the store yet.' }).waitFor();

      await page.getByRole('button', { name: 'Generate a key' }).click();
      const shown = page.getByLabel('New API key', { exact: true });
      const key = await shown.inputValue();
      expect(key).toMatch(/^rk_[\w-]{20,}$/);
      await page.getByRole('button', { name: 'Copy key' }).click();
      await page.getByText('Copied').waitFor();
      await expectNoAxeViolations(page, 'Getting started, a new key shown');
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);

      // The list shows what is kept of it: the prefix, never the key.
      await expect(page.getByRole('row').filter({ hasText: key.slice(0, 9) }).count()).resolves.toBe(1);
      await expect(page.locator('table').innerText()).resolves.not.toContain(key);

      // The curl command, copied from the page and run as a user would.
      await page.getByRole('button', { name: 'Copy command' }).click();
      const command = String(await page.evaluate('navigator.clipboard.readText()'));
      expect(command).toContain(`${server.origin}/v1/risk/evaluate`);
      expect(command).toContain(`Bearer ${key}`);
      // Asynchronously: the service answering it runs in this process.
      const answer = JSON.parse((await promisify(execFile)('sh', ['-c', command], { timeout: 15_000 })).stdout) as { score: { state: string }; event_type: string };
      expect(answer.event_type).toBe('account_register');
      expect(['approve', 'review', 'decline']).toContain(answer.score.state);

      // Shown once: gone after a reload.
      await page.reload();
      await page.getByRole('heading', { name: 'Getting started' }).waitFor();
      await expect(page.getByLabel('New API key', { exact: true }).count()).resolves.toBe(0);
      expect(await page.content()).not.toContain(key);

      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('rotates and revokes a key only after a confirmation that says what stops working', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByLabel('Account').selectOption('acme');
      await page.getByRole('button', { name: 'Generate a key' }).click();
      const first = await page.getByLabel('New API key', { exact: true }).inputValue();
      await page.getByRole('button', { name: 'I have stored it' }).click();
      expect((await evaluate(first)).status).toBe(200);

      const prefix = first.slice(0, 9);
      await page.getByRole('button', { name: `Rotate key ${prefix}…` }).click();
      const dialog = page.getByRole('dialog');
      await expect(dialog.innerText()).resolves.toMatch(new RegExp(`Key ${prefix}… stops working[\\s\\S]*401 Unauthorized`));
      // Cancel changes nothing.
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await evaluate(first)).status).toBe(200);

      await page.getByRole('button', { name: `Rotate key ${prefix}…` }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
      await page.getByRole('heading', { name: `New key, replacing ${prefix}…` }).waitFor();
      await expectNoAxeViolations(page, 'Getting started, a rotated key shown');
      const second = await page.getByLabel('New API key', { exact: true }).inputValue();
      expect((await evaluate(first)).status).toBe(401);
      expect((await evaluate(second)).status).toBe(200);

      const revoke = page.getByRole('button', { name: `Revoke key ${second.slice(0, 9)}…` });
      await revoke.click();
      await expect(page.getByRole('dialog').innerText()).resolves.toContain('stops working');
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await revoke.waitFor({ state: 'detached' });
      expect((await evaluate(second)).status).toBe(401);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('an analyst', () => {
  it('sees the key list but cannot make, rotate or revoke keys, nor open users or the audit log', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, 'analyst@console.test');
      await page.getByRole('heading', { name: 'Getting started' }).waitFor();
      await page.getByText('Your role in this account is analyst').waitFor();
      await expectNoAxeViolations(page, 'Getting started, as an analyst');
      for (const name of ['Generate a key', /^Rotate key/, /^Revoke key/]) await expect(page.getByRole('button', { name }).count()).resolves.toBe(0);
      const sections = await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allInnerTexts();
      expect(sections).toContain('Getting started');
      expect(sections).not.toContain('Users');
      expect(sections).not.toContain('Audit log');
      expect(sections).not.toContain('Webhooks');
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('a session', () => {
  it('ends at log out: the page goes back to log in, and a reload stays there', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('heading', { name: 'Log in to the risk console' }).waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Log in to the risk console' }).waitFor();
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('answers a wrong password on the form, without a session', async () => {
    const { context, page } = await openConsole(browser, server.origin);
    try {
      await page.getByLabel('E-mail address').fill(OWNER);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect(page.getByRole('alert').innerText()).resolves.toContain('Wrong e-mail address or password');
    } finally {
      await context.close();
    }
  });
});
