import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser, type Session } from '../support/admin.js';
import { ADDED_RULE, evaluate, EVENTS, fillLog, seedBacktest, type BacktestSeed } from '../support/backtest-seed.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, startConsoleServer, type ConsoleServer } from '../support/console.js';

/**
 * The backtest view in Debian's Chromium, against the real service on a loopback port: evaluations
 * of `acme` made through the public API with a key made through the admin API (three from
 * example.org, three not), two of them labelled, and a draft that adds a rule firing on
 * example.org. An owner starts a backtest of the draft over the last day from the page, follows it
 * to its end and reads the report: the transitions, the rule's hits, the changed decisions linked
 * to the decisions page and the confusion matrix are what the API reports and what was seeded.
 * A running backtest is cancelled from its page. The draft runs in shadow, is compared with live
 * over the sign-ups since and stopped. An analyst reads but starts and cancels nothing. A backtest
 * of a draft discarded since says so and still shows the file it tested.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });

const ANALYST = 'analyst@backtest.test';

let server: ConsoleServer;
let browser: Browser;
let owner: Session;
let key: string;
let made: BacktestSeed['made'];

beforeAll(async () => {
  server = await startConsoleServer();
  await createUser(server.store, ANALYST, { roles: { acme: 'analyst' } });
  ({ owner, key, made } = await seedBacktest(server, OWNER));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

/** The text of each cell of a table's body rows (row headers included). */
const cells = (page: Page, table: string) =>
  page.locator(`${table} tbody tr`).evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => (cell as unknown as { innerText: string }).innerText.trim())));

describe('a backtest of a draft, as an owner', () => {
  it('starts from the page, follows it to its end, and shows the report the API gives', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/rules/account_register/backtest`);
      await page.getByRole('heading', { level: 1, name: 'Backtests: account_register' }).waitFor();
      await page.getByText('No backtest of account_register yet.').waitFor();
      await expectNoAxeViolations(page, 'Backtests, none yet');
      const form = page.getByRole('region', { name: 'Start a backtest' });
      const versions = form.getByLabel('Rules to test');
      await versions.locator('option', { hasText: 'draft' }).waitFor({ state: 'attached' });
      await expect(versions.locator('option:checked').innerText()).resolves.toMatch(/^Version \d+ \(draft\): Decline example\.org$/);
      await expect(form.getByLabel('Time range').inputValue()).resolves.toBe('24h');

      // A range of local times that ends before it starts: the API's problem, shown at the field it names.
      await form.getByLabel('Time range').selectOption('custom');
      await form.getByLabel('From', { exact: true }).fill('2026-11-20T12:00');
      await form.getByLabel('To', { exact: true }).fill('2026-11-19T12:00');
      await form.getByRole('button', { name: 'Start backtest' }).click();
      await form.getByText('must be after since').waitFor();
      await expectNoAxeViolations(page, 'Backtests, a range refused');
      await expect(form.getByLabel('To', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
      await form.getByLabel('Time range').selectOption('24h');
      await form.getByRole('button', { name: 'Start backtest' }).click();

      await page.waitForURL(/#\/acme\/rules\/account_register\/backtest\/bt_[0-9a-f]{16}$/);
      const id = /bt_[0-9a-f]{16}$/.exec(page.url())![0];
      await page.getByRole('heading', { level: 1, name: `Backtest ${id}` }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Done' }).waitFor({ timeout: 30_000 });
      const api = (await server.app.inject({ url: `${EVENTS}/backtests/${id}`, headers: owner.read })).json();
      expect(api).toMatchObject({ status: 'done', progress: { evaluations: 6, replayed: 6, skipped: 0 } });

      // The transitions: the three sign-ups from example.org go from approve to decline, the rest stay.
      const matrix = await cells(page, 'table.matrix');
      expect(matrix).toEqual([['approve', '3', '0', '3'], ['review', '0', '0', '0'], ['decline', '0', '0', '0']]);
      expect(matrix.map(([_state, ...counts]) => counts.map(Number))).toEqual(['approve', 'review', 'decline'].map((s) => ['approve', 'review', 'decline'].map((c) => api.report.transitions[s][c])));
      await expect(page.locator('table.matrix td.changed').allInnerTexts()).resolves.toEqual(['3']);

      // The added rule: no hit live, one per example.org sign-up with the draft, 40 points each.
      const rule = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: ADDED_RULE.name, exact: true }) });
      await expect(rule.locator('td').allInnerTexts()).resolves.toEqual(['0', '3', '+3', '0', '120']);
      expect(api.report.rules.find((r: { rule_name: string }) => r.rule_name === ADDED_RULE.name)).toEqual({ rule_name: ADDED_RULE.name, live: { hits: 0, dry_run_hits: 0, score: 0 }, candidate: { hits: 3, dry_run_hits: 0, score: 120 } });
      await expect(page.locator('table.rule-hits tbody tr.changed').count()).resolves.toBe(1);

      // The changed decisions: exactly the example.org evaluations, each linked to its decision.
      const links = page.locator('table.changed-decisions tbody a');
      await expect(links.allInnerTexts()).resolves.toEqual(made.org);
      await expect(links.first().getAttribute('href')).resolves.toBe(`#/acme/decisions/${made.org[0]}`);
      await expect(page.locator('table.changed-decisions tbody tr').first().innerText()).resolves.toMatch(/approve \(0\)\s+decline \(40\)\s+\+ Sign-up from example\.org\s+fraud/);

      // The labels: the fraud one (example.org) declined by the draft, not live; the legit one approved by both.
      await expect(cells(page, 'table.confusion')).resolves.toEqual([
        ['Live', '0', '0', '1', '1', '–', '0.0 %'],
        ['Candidate', '1', '0', '0', '1', '100.0 %', '100.0 %'],
      ]);
      expect(api.report.labels).toMatchObject({ labelled: 2, candidate: { confusion: { true_positive: 1, false_positive: 0, false_negative: 0, true_negative: 1 }, precision: 1, recall: 1 } });

      // The chart: uPlot's canvas, labelled with its numbers.
      await page.locator('.state-chart canvas').waitFor();
      await expectNoAxeViolations(page, 'A backtest report');
      await expect(page.getByRole('img', { name: /Live: 6 approve, 0 review, 0 decline\. candidate: 3 approve, 0 review, 3 decline\./ }).count()).resolves.toBe(1);

      // Finished: nothing to cancel. The list shows it.
      await expect(page.getByRole('button', { name: 'Cancel backtest' }).count()).resolves.toBe(0);
      await page.getByRole('link', { name: '← Backtests of account_register' }).click();
      const row = page.getByRole('row').filter({ hasText: id });
      await row.waitFor();
      await expect(row.innerText()).resolves.toMatch(/done\s+version \d+[\s\S]*6 \/ 6/);

      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('cancel', () => {
  /** Long enough that the replay (thousands of evaluations a second) still runs when the user confirms. */
  const ROWS = 50_000;

  it('stops a running backtest after a confirmation, and says it was cancelled', async () => {
    const account = await server.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: owner.write, payload: { id: 'bulk', name: 'Bulk' } });
    expect(account.statusCode, account.body).toBe(201);
    fillLog(server, 'bulk', made.com[1]!, ROWS);
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/bulk/rules/account_register/backtest`);
      const form = page.getByRole('region', { name: 'Start a backtest' });
      await form.getByLabel('Rules to test').locator('option', { hasText: 'live' }).waitFor({ state: 'attached' });
      await form.getByRole('button', { name: 'Start backtest' }).click();
      await page.getByRole('status').filter({ hasText: 'Running' }).waitFor();
      const id = /bt_[0-9a-f]{16}$/.exec(page.url())![0];
      await expect(page.getByRole('progressbar', { name: 'Replaying' }).count()).resolves.toBe(1);

      await page.getByRole('button', { name: 'Cancel backtest' }).click();
      const dialog = page.getByRole('dialog', { name: `Cancel backtest ${id}?` });
      await expect(dialog.innerText()).resolves.toContain('no report is kept');
      await dialog.getByRole('button', { name: 'Cancel backtest' }).click();
      await page.getByRole('status').filter({ hasText: 'Cancelled: no report.' }).waitFor();
      await expectNoAxeViolations(page, 'A cancelled backtest');
      await expect(page.getByRole('button', { name: 'Cancel backtest' }).count()).resolves.toBe(0);
      await expect(page.getByRole('progressbar').count()).resolves.toBe(0);
      await expect(page.locator('table.matrix').count()).resolves.toBe(0);

      const api = (await server.app.inject({ url: `/admin/v1/accounts/bulk/rule-sets/account_register/backtests/${id}`, headers: owner.read })).json();
      expect(api).toMatchObject({ status: 'cancelled', report: null });
      expect(api.progress.evaluations).toBeLessThan(ROWS);
      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('shadow', () => {
  it('runs the draft in shadow, compares it with live over the sign-ups since, and stops it after a confirmation', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/rules/account_register/backtest`);
      const shadow = page.getByRole('region', { name: 'Shadow' });
      await shadow.getByText('No version runs in shadow.').waitFor();
      const versions = shadow.getByLabel('Version to run in shadow');
      await versions.locator('option', { hasText: 'draft' }).waitFor({ state: 'attached' });
      const draft = Number(await versions.inputValue());
      await shadow.getByRole('button', { name: 'Run in shadow' }).click();
      await shadow.getByText(`Version ${draft} runs in shadow since`).waitFor();

      // Three sign-ups scored beside live by the draft: the two from example.org decline in shadow.
      const ids = [await evaluate(server, key, 10, 'shadow0@example.org'), await evaluate(server, key, 11, 'shadow1@example.com'), await evaluate(server, key, 12, 'shadow2@example.org')];
      await shadow.getByRole('button', { name: 'Compare' }).click();
      await shadow.locator('table.matrix').waitFor();
      await expectNoAxeViolations(page, 'A shadow\'s comparison');
      const api = (await server.app.inject({ url: `${EVENTS}/shadow/comparison?since=24h`, headers: owner.read })).json();
      expect(api).toMatchObject({ evaluations: 3, transitions: { approve: { approve: 1, decline: 2 } }, shadow_versions: [{ version: draft, evaluations: 3 }], truncated: false });
      await expect(cells(page, 'table.matrix')).resolves.toEqual([['approve', '1', '0', '2'], ['review', '0', '0', '0'], ['decline', '0', '0', '0']]);
      const rule = shadow.getByRole('row').filter({ has: page.getByRole('rowheader', { name: ADDED_RULE.name, exact: true }) });
      await expect(rule.locator('td').allInnerTexts()).resolves.toEqual(['0', '2', '+2', '0', '80']);
      await expect(shadow.locator('table.changed-decisions tbody a').allInnerTexts()).resolves.toEqual([ids[0], ids[2]]);
      await expect(shadow.getByText(`Shadow versions compared: version ${draft} (3).`).count()).resolves.toBe(1);
      await expect(shadow.getByText('No labels in range').count()).resolves.toBe(1);

      await shadow.getByRole('button', { name: 'Stop shadow' }).click();
      const dialog = page.getByRole('dialog', { name: 'Stop the shadow of account_register?' });
      await dialog.getByRole('button', { name: 'Stop shadow' }).click();
      await shadow.getByText('No version runs in shadow.').waitFor();
      expect((await server.app.inject({ url: `${EVENTS}/shadow`, headers: owner.read })).statusCode).toBe(404);
      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('an analyst', () => {
  it('reads backtests, their reports and the shadow, but has no start form, no cancel and no shadow controls', async () => {
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      const started = await server.app.inject({ method: 'POST', url: `${EVENTS}/backtests`, headers: owner.write, payload: { version: 1, since: '24h' } });
      expect(started.statusCode, started.body).toBe(202);
      await logIn(page, ANALYST);
      await page.goto(`${server.origin}/console/#/acme/rules/account_register/backtest`);
      await page.getByText('Only the account\'s admins start backtests; you can read them.').waitFor();
      await expectNoAxeViolations(page, 'Backtests, as an analyst');
      await expect(page.getByRole('button', { name: 'Start backtest' }).count()).resolves.toBe(0);
      const shadow = page.getByRole('region', { name: 'Shadow' });
      await shadow.getByText('No version runs in shadow.').waitFor();
      await expect(shadow.getByRole('button', { name: 'Run in shadow' }).count()).resolves.toBe(0);
      await expect(shadow.getByRole('button', { name: 'Compare' }).count()).resolves.toBe(1);
      await page.getByRole('link', { name: started.json().id }).click();
      await page.getByRole('status').filter({ hasText: 'Done' }).waitFor();
      await page.locator('table.matrix').waitFor();
      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('a backtest whose version is gone', () => {
  it('says the draft it tested is no longer stored, and still shows the rule file it tested', async () => {
    const draft = (await server.app.inject({ url: EVENTS, headers: owner.read })).json().draft.version as number;
    const started = await server.app.inject({ method: 'POST', url: `${EVENTS}/backtests`, headers: owner.write, payload: { version: draft, since: '24h' } });
    expect(started.statusCode, started.body).toBe(202);
    expect((await server.app.inject({ method: 'DELETE', url: `${EVENTS}/draft`, headers: owner.write })).statusCode).toBe(204);
    const { context, page, requests, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/rules/account_register/backtest/${started.json().id}`);
      await page.getByRole('status').filter({ hasText: 'Done' }).waitFor();
      await page.getByText(`${draft}: no longer stored (a discarded draft, say); the rule file it tested is kept below.`).waitFor();
      await page.getByText('The rule file tested').click();
      await expect(page.locator('details pre').innerText()).resolves.toContain('id: example_org');
      await page.locator('table.matrix').waitFor();
      expect(requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
