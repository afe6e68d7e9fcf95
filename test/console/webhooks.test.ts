import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, startConsoleServer, type ConsoleServer } from '../support/console.js';

/**
 * The Webhooks page in Debian's Chromium against the real service, with a real receiver on
 * loopback (WEBHOOK_ALLOW_PRIVATE) that checks each signature with the Node example's own
 * verifyWebhook (examples/node/webhook-receiver.mjs): add an endpoint (the secret shown once,
 * copied), a test delivery, the delivery log with status codes and times, a failed test sent
 * again, edit, rotate (both secrets sign), delete; axe-core on every state.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS * 2 });

type Verify = (secret: string, headers: Record<string, string | string[] | undefined>, body: string) => boolean;
let verifyWebhook: Verify;
let server: ConsoleServer;
let browser: Browser;
let receiver: Server;
let status = 204;
const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string; type: string }> = [];
let receiverUrl: string;

beforeAll(async () => {
  // The example as a reader copies it (a plain .mjs, not part of the typed build).
  ({ verifyWebhook } = (await import('../../examples/node/webhook-receiver.mjs' as string)) as { verifyWebhook: Verify });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: request.headers, body, type: (JSON.parse(body) as { type: string }).type });
      response.writeHead(status).end(status >= 300 ? 'try later' : '');
    });
  }).listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/risk`;
  server = await startConsoleServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_SECRET_KEY: 'a webhook secret key of at least 32 characters' } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
  receiver?.close();
});

const row = (page: Page, text: string) => page.getByRole('row').filter({ hasText: text });

describe('the Webhooks page, as an owner', () => {
  it('adds an endpoint, tests it, reads the delivery log, sends again, edits, rotates and deletes it', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/webhooks`);
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await page.getByRole('cell', { name: 'No endpoint yet: add one below.' }).waitFor();
      await expectNoAxeViolations(page, 'Webhooks, no endpoint');

      // Refused by field, in words for people.
      await page.getByLabel('URL').fill('ftp://files.example.com/x');
      await page.getByRole('checkbox', { name: /review\.resolved/ }).uncheck();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByText('Choose at least one event').waitFor();
      await expectNoAxeViolations(page, 'Webhooks, a refused endpoint');

      await page.getByLabel('URL').fill(receiverUrl);
      await page.getByRole('checkbox', { name: /review\.resolved/ }).check();
      await page.getByRole('checkbox', { name: /evaluation\.declined/ }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secretField = page.getByLabel('Signing secret', { exact: true });
      await secretField.waitFor();
      const secret = await secretField.inputValue();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      await page.getByRole('button', { name: 'Copy secret' }).click();
      await page.getByText('Copied').waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
      await row(page, receiverUrl).getByText('review.resolved').waitFor();
      await expect(page.locator('table').first().innerText()).resolves.not.toContain(secret);
      await expectNoAxeViolations(page, 'Webhooks, the secret shown once');

      // A test delivery, sent at once: the receiver checks it with the example's code.
      await page.getByRole('button', { name: `Send test to ${receiverUrl}` }).click();
      await page.getByText(/^Test delivery delivered: 204 in \d+ ms\.$/).waitFor();
      expect(received.map((r) => r.type)).toEqual(['webhook.test']);
      expect(verifyWebhook(secret, received[0]!.headers, received[0]!.body)).toBe(true);
      const log = page.getByRole('region', { name: /Delivery log of/ }).or(page.locator('section', { has: page.getByRole('heading', { name: /Delivery log of/ }) }));
      await log.getByText(/^204 · \d+ ms$/).first().waitFor();
      await expectNoAxeViolations(page, 'Webhooks, a test delivered and the delivery log');

      // The receiver fails: the log shows the 503 and its time; "Send again" once it is back.
      status = 503;
      await page.getByRole('button', { name: `Send test to ${receiverUrl}` }).click();
      await page.getByText(/^Test delivery failed: 503 in \d+ ms \(status 503\)\. Retried on the back-off\.$/).waitFor();
      await log.getByText(/^503 · \d+ ms$/).waitFor();
      status = 204;
      const failedRow = log.getByRole('row').filter({ hasText: '503 · ' });
      await failedRow.getByRole('button', { name: /^Send again/ }).click();
      await log.getByText(/^Queued again as msg_/).waitFor();
      await server.app.webhooks.tick();
      await log.getByRole('button', { name: 'Refresh' }).click();
      await log.getByText(/^sent again from/).waitFor();
      await expect.poll(() => log.getByText(/^204 · \d+ ms$/).count()).toBe(2);
      expect(received.map((r) => r.type)).toEqual(['webhook.test', 'webhook.test', 'webhook.test']);
      expect(received.every((r) => verifyWebhook(secret, r.headers, r.body))).toBe(true);
      expect(received[2]!.headers['webhook-id']).not.toBe(received[1]!.headers['webhook-id']);
      await expectNoAxeViolations(page, 'Webhooks, a failed attempt and one sent again');

      // Edit: events and off.
      await page.getByRole('button', { name: `Edit ${receiverUrl}` }).click();
      const form = page.getByRole('form', { name: `Edit ${receiverUrl}` });
      await form.getByRole('checkbox', { name: /review\.opened/ }).check();
      await form.getByRole('checkbox', { name: /^On/ }).uncheck();
      await expectNoAxeViolations(page, 'Webhooks, editing an endpoint');
      await form.getByRole('button', { name: 'Save endpoint' }).click();
      await row(page, receiverUrl).getByRole('cell', { name: 'off', exact: true }).waitFor();
      await row(page, receiverUrl).getByText('review.opened').waitFor();

      // Rotate: a confirmation that says both sign for a day; the new secret shown once; both verify.
      await page.getByRole('button', { name: `Rotate secret of ${receiverUrl}` }).click();
      const dialog = page.getByRole('dialog', { name: /Rotate the signing secret/ });
      await dialog.getByText(/For 24 hours each delivery is signed with both/).waitFor();
      await expectNoAxeViolations(page, 'Webhooks, rotate confirmation');
      await dialog.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByText(/The previous secret keeps signing too for 24 hours/).waitFor();
      const rotated = await page.getByLabel('Signing secret', { exact: true }).inputValue();
      expect(rotated).not.toBe(secret);
      await row(page, receiverUrl).getByText(/previous secret valid until/).waitFor();
      await page.getByRole('button', { name: `Send test to ${receiverUrl}` }).click();
      await page.getByText(/^Test delivery delivered: 204/).waitFor();
      const last = received.at(-1)!;
      expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verifyWebhook(rotated, last.headers, last.body)).toBe(true);
      expect(verifyWebhook(secret, last.headers, last.body)).toBe(true);

      // Delete, after a confirmation.
      await page.getByRole('button', { name: `Delete ${receiverUrl}` }).click();
      const confirm = page.getByRole('dialog', { name: /Delete the endpoint/ });
      await expectNoAxeViolations(page, 'Webhooks, delete confirmation');
      await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
      await page.getByRole('cell', { name: 'No endpoint yet: add one below.' }).waitFor();
      expect((await server.store.audit({ account: 'acme' })).map((a) => a.action)).toEqual(expect.arrayContaining(['webhook.create', 'webhook.test', 'webhook.resend', 'webhook.update', 'webhook.rotate', 'webhook.delete']));

      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
