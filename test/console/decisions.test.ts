import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { login, type Session } from '../support/admin.js';
import { evaluationBody } from '../support/app.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, startConsoleServer, type ConsoleServer } from '../support/console.js';

/**
 * The Decisions and Lists pages in Chromium against the real service: evaluations made through the
 * public API with a key of `acme`, then found with the filters, paged, charted, opened and
 * explained, labelled; list entries added (a bad value refused at its field) and removed. What a
 * client sent (a user id with markup) is shown as text.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });

const HOSTILE_USER = '<img src=x onerror=alert(1)>';
const PLAIN = 52;
let server: ConsoleServer;
let browser: Browser;
let owner: Session;
const made = { disposable: '', hostile: '', plain: [] as string[] };

async function evaluate(key: string, overrides: Record<string, unknown>): Promise<{ id: string; score: { state: string } }> {
  const answer = await fetch(`${server.origin}/v1/risk/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(evaluationBody(overrides)),
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as { id: string; score: { state: string } };
}

beforeAll(async () => {
  server = await startConsoleServer();
  owner = await login(server.app, OWNER);
  const key = (await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/keys', headers: owner.write })).json().key as string;
  for (let i = 0; i < PLAIN; i += 1) made.plain.push((await evaluate(key, { email: `user${i}@example.com`, ip: `192.0.2.${i + 1}` })).id);
  made.hostile = (await evaluate(key, { email: 'mallory@example.net', ip: '198.51.100.20', user: { user_id: HOSTILE_USER } })).id;
  const disposable = await evaluate(key, { email: 'jane.doe@mailinator.com', ip: '81.2.69.160' });
  expect(disposable.score.state).toBe('decline');
  made.disposable = disposable.id;
  await server.store.log.flush();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

describe('the Decisions page', () => {
  it('lists, filters (in the URL), pages and charts the decisions', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Decisions' }).click();
      await page.getByRole('heading', { level: 1, name: 'Decisions' }).waitFor();
      const rows = page.locator('table.decisions tbody tr');
      // Newest first, 50 a page, then the rest.
      await expect.poll(() => rows.count()).toBe(50);
      await expect(rows.first().getByRole('cell').nth(2).textContent()).resolves.toBe('jane.doe@mailinator.com');
      await page.getByRole('button', { name: 'Older decisions' }).click();
      await expect.poll(() => rows.count()).toBe(PLAIN + 2);
      await expect(page.getByRole('button', { name: 'Older decisions' }).count()).resolves.toBe(0);

      // The chart: uPlot's canvas, and its label with the same totals as the log.
      await page.locator('.states-over-time canvas').first().waitFor();
      await expect.poll(() => page.locator('.states-over-time [role=img]').getAttribute('aria-label')).toBe(`Decisions per hour: ${PLAIN + 1} approve, 0 review, 1 decline.`);
      await expectNoAxeViolations(page, 'Decisions, every row');

      // Filters: by state, then by e-mail address; each is in the URL.
      await page.getByLabel('State').selectOption('decline');
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => rows.count()).toBe(1);
      expect(decodeURIComponent(page.url())).toContain('?state=decline');
      await expect.poll(() => page.locator('.states-over-time [role=img]').getAttribute('aria-label')).toBe('Decisions per hour: 0 approve, 0 review, 1 decline.');
      await page.getByRole('button', { name: 'Clear filters' }).click();
      // The form is made again for the new URL: wait for it before typing into it.
      await expect.poll(() => rows.count()).toBe(50);
      await expect.poll(() => decodeURIComponent(page.url())).not.toContain('state=');
      await page.getByLabel('E-mail address').fill('USER7@example.com');
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => rows.count()).toBe(1);
      await expect(rows.first().getByRole('cell').nth(3).textContent()).resolves.toBe('192.0.2.8');
      // The back button returns to the view before (here: no filter); a rule filter finds what it fired on.
      await page.goBack();
      await expect.poll(() => rows.count()).toBe(50);
      expect(decodeURIComponent(page.url())).not.toContain('email=');
      await page.goto(`${server.origin}/console/#/acme/decisions/${encodeURIComponent('?rule=email_disposable')}`);
      await expect.poll(() => rows.count()).toBe(1);
      await page.getByLabel('IP address or CIDR').fill('192.0.2.0/33');
      await page.getByRole('button', { name: 'Search' }).click();
      // The API's refusal is shown at the field it names.
      await page.getByText('must be an IPv4 or IPv6 address, or a CIDR range').waitFor();
      await expect.poll(() => page.getByLabel('IP address or CIDR').getAttribute('aria-invalid')).toBe('true');
      await expectNoAxeViolations(page, 'Decisions, a refused filter');

      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('explains a decision rule by rule, and labels it', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/decisions`);
      await page.getByRole('link', { name: `Decision ${made.disposable}` }).click();
      await page.getByRole('heading', { level: 2, name: /decline, score \d+/i }).waitFor();
      const why = page.getByRole('region', { name: 'Why this score' });
      const fired = why.locator('tr.fired');
      await expect(fired.count()).resolves.toBe(1);
      await expect(fired.getByRole('rowheader').textContent()).resolves.toContain('email_disposable');
      await expect(fired.locator('td.num').textContent()).resolves.toMatch(/^\+\d+$/);
      await expect(fired.locator('ul.evidence').textContent()).resolves.toContain('email.disposable = true');
      // The IP address's position (the test GeoIP file places it in London), drawn and as text.
      await page.locator('.position canvas').waitFor();
      await expect(page.locator('.position figcaption').textContent()).resolves.toMatch(/^51\.\d{4}, -0\.\d{4}/);
      // The DNS of this test service answers nothing: said, not guessed.
      await expect(page.getByRole('region', { name: 'What could not be checked' }).textContent()).resolves.toMatch(/could not run/);
      await page.getByText('The request as received').click();
      await expectNoAxeViolations(page, 'a decision');

      await page.getByLabel('Reason (optional)').fill('Chargeback');
      await page.getByRole('button', { name: 'Label fraud' }).click();
      await page.getByRole('region', { name: 'Label' }).getByText('Labelled fraud').waitFor();
      await page.reload();
      await page.getByRole('region', { name: 'Label' }).getByText('“Chargeback”').waitFor();
      await expectNoAxeViolations(page, 'a labelled decision');
      const stored = await server.app.inject({ url: `/admin/v1/accounts/acme/decisions/${made.disposable}`, headers: owner.read });
      expect(stored.json().labelled).toMatchObject({ label: 'fraud', reason: 'Chargeback' });
      // And the log shows it.
      await page.goto(`${server.origin}/console/#/acme/decisions/${encodeURIComponent('?label=fraud')}`);
      await expect.poll(() => page.locator('table.decisions tbody tr').count()).toBe(1);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows a user id with markup as text, in the log and in the decision', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/decisions`);
      await page.getByRole('cell', { name: HOSTILE_USER, exact: true }).waitFor();
      await page.getByRole('link', { name: `Decision ${made.hostile}` }).click();
      await page.getByRole('region', { name: 'Why this score' }).waitFor();
      await page.getByText(HOSTILE_USER, { exact: true }).first().waitFor();
      await expect(page.locator('img').count()).resolves.toBe(0);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('the Decisions page, with the keyboard', () => {
  it('keeps the filter form (its fields, their ids, focus) across searches; a decision opened starts at its heading', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    const focused = () => page.evaluate<string>("(() => { const e = document.activeElement; return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + e.textContent.trim().slice(0, 40); })()");
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/decisions`);
      const rows = page.locator('table.decisions tbody tr');
      await expect.poll(() => rows.count()).toBe(50);
      const emailId = await page.getByLabel('E-mail address').getAttribute('id');
      await page.getByLabel('E-mail address').focus();
      await page.keyboard.type('jane.doe@mailinator.com');
      await page.keyboard.press('Enter');
      await expect.poll(() => rows.count()).toBe(1);
      // The same field (same id), still focused, still holding what was typed.
      await expect.poll(focused).toBe(`input#${emailId} `);
      await expect(page.getByLabel('E-mail address').inputValue()).resolves.toBe('jane.doe@mailinator.com');
      await page.getByRole('button', { name: 'Clear filters' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => rows.count()).toBe(50);
      await expect.poll(focused).toBe('button Clear filters');
      expect(await page.getByLabel('E-mail address').getAttribute('id')).toBe(emailId);
      await expect(page.getByLabel('E-mail address').inputValue()).resolves.toBe('');
      // Back shows the search before in the form.
      await page.goBack();
      await expect.poll(() => rows.count()).toBe(1);
      await expect.poll(() => page.getByLabel('E-mail address').inputValue()).toBe('jane.doe@mailinator.com');

      // The row's link is named by what it shows (the time), then the decision's id.
      const link = page.getByRole('link', { name: `decision ${made.disposable}` });
      const name = await link.evaluate((a) => a.textContent);
      expect(name).toMatch(new RegExp(`^.+, decision ${made.disposable}$`));
      await link.focus();
      await page.keyboard.press('Enter');
      await expect.poll(focused).toBe('h1 Decision');
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('the Lists page', () => {
  it('adds an entry, refuses a bad value at its field, and removes an entry after a confirmation', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Lists' }).click();
      await page.getByRole('heading', { level: 1, name: 'Lists' }).waitFor();
      const form = page.getByRole('form', { name: 'Add an entry' });
      await form.getByLabel('Kind').selectOption('ip');
      await form.getByLabel('Value').fill('203.0.113.0/33');
      await form.getByLabel('Reason').fill('Card testing');
      await form.getByRole('button', { name: 'Add' }).click();
      await expect.poll(() => form.getByLabel('Value').getAttribute('aria-invalid')).toBe('true');
      await form.getByLabel('Value').fill('203.0.113.0/24');
      await form.getByRole('button', { name: 'Add' }).click();
      await page.getByRole('cell', { name: '203.0.113.0/24', exact: true }).waitFor();
      await expectNoAxeViolations(page, 'Lists, one entry');
      const listed = await server.app.inject({ url: '/admin/v1/accounts/acme/lists', headers: owner.read });
      expect(listed.json().entries).toEqual([expect.objectContaining({ list: 'block', kind: 'ip', value: '203.0.113.0/24', reason: 'Card testing' })]);

      await page.getByRole('button', { name: 'Remove 203.0.113.0/24 from the block list' }).click();
      const dialog = page.getByRole('dialog');
      await expect(dialog.textContent()).resolves.toContain('list_block stops firing');
      await expectNoAxeViolations(page, 'Lists, the Remove dialog');
      await dialog.getByRole('button', { name: 'Remove entry' }).click();
      await page.getByRole('cell', { name: 'No entry.' }).waitFor();
      await expectNoAxeViolations(page, 'Lists, empty');
      expect((await server.app.inject({ url: '/admin/v1/accounts/acme/lists', headers: owner.read })).json().entries).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
