import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser, login, type Session } from '../support/admin.js';
import { evaluationBody } from '../support/app.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, openRuleSet, startConsoleServer, type ConsoleServer, type ConsolePage } from '../support/console.js';

/**
 * The Threat rules pages in Debian's Chromium against the real service: the cards, a draft edited
 * with a library rule, a custom rule (the API's message for a bad regular expression next to the
 * value), thresholds, the diff, the shadow's status and dry run, publish (and the next evaluation through the
 * public API fires the rule), history and rollback (checked through the admin API), a new event
 * type, discarding a draft, and an analyst's read-only view.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS * 2 });

const ANALYST = 'analyst@rules.test';
let server: ConsoleServer;
let browser: Browser;
let owner: Session;

beforeAll(async () => {
  server = await startConsoleServer();
  await createUser(server.store, ANALYST, { roles: { acme: 'analyst' } });
  owner = await login(server.app, OWNER);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

const adminApi = async <T,>(url: string) => {
  const answer = await server.app.inject({ url: `/admin/v1/accounts/acme${url}`, headers: owner.read });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json() as T;
};

const clean = (opened: ConsolePage) => {
  expect(opened.requests.filter((url) => !url.startsWith(server.origin))).toEqual([]);
  expect(opened.troubles).toEqual([]);
};

/** Waits until the control is marked invalid (the API's answer came). */
const invalid = (control: Locator) => control.and(control.page().locator('[aria-invalid="true"]')).waitFor();

async function publish(page: Page, comment: string) {
  await page.getByRole('button', { name: 'Publish…' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Comment (required)').fill(comment);
  await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}

describe('as an admin', () => {
  it('shows account_register first, adds a library rule, shows its shadow status, runs it in a dry run, publishes it, and the next evaluation fires it', async () => {
    const opened = await openConsole(browser, server.origin);
    const { page } = opened;
    try {
      await logIn(page, OWNER);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Threat rules' }).click();
      await page.getByRole('heading', { level: 1, name: 'Threat rules' }).waitFor();
      await page.locator('.rule-card').nth(3).getByRole('table').waitFor();
      expect(await page.locator('.rule-card h2').allInnerTexts()).toEqual(['account_register', 'account_login', 'account_update', 'password_reset']);
      const card = page.locator('.rule-card').first();
      await expect.poll(() => card.innerText()).toMatch(/Live: version 1, published[\s\S]*seeded from RULES_DIR/);
      await card.getByRole('cell', { name: 'email_disposable' }).waitFor();

      await card.getByRole('link', { name: 'Open account_register' }).click();
      await page.getByRole('heading', { level: 1, name: 'Threat rules: account_register' }).waitFor();
      await page.getByRole('tab', { name: 'Draft' }).click();
      await page.getByText('No draft: the first change below starts one').waitFor();
      await page.getByRole('button', { name: 'Add from the library' }).click();
      const picker = page.getByRole('region', { name: 'Add a rule from the library' });
      // The spec's five come first (already on in the shipped rules), then every other library rule.
      await picker.getByRole('button', { name: 'Add email_free_provider' }).waitFor();
      const first = picker.getByRole('table').first();
      await expect(first.locator('tbody tr td:first-child code').allInnerTexts()).resolves.toEqual(['email_undeliverable', 'email_disposable', 'ip_proxy', 'ip_datacenter', 'ip_tor']);
      await expect(first.getByText('in the draft').count()).resolves.toBe(5);
      await picker.getByText('A free mailbox provider: normal for consumers').waitFor();
      await picker.getByRole('button', { name: 'Add email_free_provider' }).click();

      await page.getByLabel('Score of email_free_provider').waitFor();
      await page.getByRole('tab', { name: 'Draft (v2)' }).waitFor();
      await page.getByRole('listitem').filter({ hasText: 'Added email_free_provider' }).waitFor();

      // The shadow's status, with the way to the page that runs, compares and stops it (test/console/backtest.test.ts drives that).
      await page.getByText('No version runs in shadow.').waitFor();
      await expect(page.getByRole('link', { name: 'Run one beside the live rules' }).getAttribute('href')).resolves.toBe('#/acme/rules/account_register/backtest');

      // A dry run of the draft: the rule fires for a free mailbox; the live version's score beside it.
      await page.getByRole('tab', { name: 'Dry run' }).click();
      await page.getByLabel('Score with').selectOption('draft');
      await page.getByLabel('Sample request (JSON)').fill(JSON.stringify({ ip: '81.2.69.160', email: 'jane.doe@gmail.com' }));
      await page.getByRole('button', { name: 'Run' }).click();
      const result = page.getByRole('region', { name: 'Dry run result' });
      await result.getByText('Rules fired: email_free_provider').waitFor();
      await expect(result.innerText()).resolves.toMatch(/Score 5: approve with version 2 \(draft\); the live version 1 gives 0 \(approve\)/);
      await page.getByRole('tab', { name: 'Draft' }).click();

      // The comment is required: the API says so next to the field, and nothing is published.
      await page.getByRole('button', { name: 'Publish…' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Publish', exact: true }).click();
      await invalid(page.getByLabel('Comment (required)'));
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      expect((await adminApi<{ published: { version: number } }>('/rule-sets/account_register')).published.version).toBe(1);

      await publish(page, 'Weigh free mailboxes');
      await page.getByRole('tab', { name: 'Live (v2)', selected: true }).waitFor();
      await expect(page.getByRole('tabpanel').innerText()).resolves.toContain('Weigh free mailboxes');
      await page.getByText('The rule file of version 2 (YAML)').click();
      await page.getByRole('tabpanel').locator('pre', { hasText: '- library: email_free_provider' }).waitFor();

      const made = await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/keys', headers: owner.write });
      expect(made.statusCode, made.body).toBe(201);
      const evaluated = await fetch(`${server.origin}/v1/risk/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${(made.json() as { key: string }).key}`, 'content-type': 'application/json' },
        body: JSON.stringify(evaluationBody({ email: 'jane.doe@gmail.com' })),
      });
      expect(evaluated.status).toBe(200);
      const answer = (await evaluated.json()) as { score: { details: Array<{ rule_name: string; score: number }> } };
      expect(answer.score.details).toContainEqual({ rule_id: 'email_free_provider', rule_name: 'Email address is from a free provider', rule_type: 'static', score: 5 });
      clean(opened);
    } finally {
      await opened.context.close();
    }
  });

  it('adds a custom rule (a bad regular expression named next to the value), changes thresholds, shows the diff, publishes, rolls back, and saves again a draft a rollback overtook', async () => {
    const opened = await openConsole(browser, server.origin);
    const { page } = opened;
    try {
      await logIn(page, OWNER);
      await openRuleSet(page, server.origin, 'account_login');
      await page.getByRole('tab', { name: 'Draft' }).click();
      await page.getByRole('button', { name: 'Write a custom rule' }).click();
      const editor = page.getByRole('region', { name: 'Write a custom rule' });
      await editor.getByLabel('Rule id').fill('corporate_domain');
      await editor.getByLabel('Name').fill('Corporate <b>domain</b>');
      await editor.getByLabel('Score', { exact: true }).fill('15');
      await editor.getByLabel('Field', { exact: true }).selectOption('email.domain');
      await expect(editor.getByText('Lower-cased domain, IDN as punycode').count()).resolves.toBe(1);
      // Only the operators of a text field: no numeric comparison.
      const operators = await editor.getByLabel('Operator').locator('option').allInnerTexts();
      expect(operators).toContain('matches the regular expression');
      expect(operators).not.toContain('is greater than');
      await editor.getByLabel('Operator').selectOption('matches');
      const value = editor.getByLabel('Value', { exact: true });
      await value.fill('(example');
      await editor.getByRole('button', { name: 'Add to the draft' }).click();
      const message = editor.getByText(/not a valid RE2 regular expression/);
      await message.waitFor();
      await invalid(value);
      expect(await value.getAttribute('aria-describedby')).toContain(await message.getAttribute('id'));

      await value.fill('^example\\.(com|org)$');
      await editor.getByRole('button', { name: 'Add to the draft' }).click();
      await page.getByLabel('Score of corporate_domain').waitFor();
      // A rule's name is user input: shown as text.
      await page.getByRole('cell', { name: 'Corporate <b>domain</b>' }).waitFor();
      await page.getByText('when email.domain matches the regular expression "^example\\.(com|org)$"').waitFor();
      await expect(page.locator('main b').count()).resolves.toBe(0);

      // Thresholds: the API's refusal next to the field, then a change.
      await page.getByLabel('Review from').fill('50');
      await page.getByLabel('Decline from').fill('30');
      await page.getByRole('button', { name: 'Save the draft' }).click();
      await page.locator('.field-error', { hasText: 'review must not be above decline' }).waitFor();
      await page.getByLabel('Review from').fill('25');
      await page.getByLabel('Decline from').fill('45');
      await page.getByRole('button', { name: 'Save the draft' }).click();
      await page.getByRole('listitem').filter({ hasText: 'Thresholds: review 20 → 25, decline 40 → 45' }).waitFor();
      await page.getByRole('listitem').filter({ hasText: 'Added corporate_domain' }).waitFor();
      await page.locator('.diff-add', { hasText: 'id: corporate_domain' }).waitFor();
      await page.locator('.diff-add', { hasText: 'review: 25' }).waitFor();

      // A score change in place (out of range first: the API's message next to it), then the mode.
      await page.getByLabel('Score of corporate_domain').fill('150');
      await page.getByRole('button', { name: 'Save the draft' }).click();
      await invalid(page.getByLabel('Score of corporate_domain'));
      await page.getByLabel('Score of corporate_domain').fill('20');
      await page.getByLabel('Mode of corporate_domain').selectOption('dry_run');
      await page.getByRole('button', { name: 'Save the draft' }).click();
      await page.getByRole('listitem').filter({ hasText: 'Added corporate_domain' }).filter({ hasText: 'score 20' }).waitFor();

      await publish(page, 'Corporate domains, tighter bands');
      const live = await adminApi<{ published: { version: number; thresholds: unknown; rules: Array<{ id: string; score: number; mode: string }> } }>('/rule-sets/account_login');
      expect(live.published.version).toBe(2);
      expect(live.published.thresholds).toEqual({ review: 25, decline: 45 });
      expect(live.published.rules).toContainEqual(expect.objectContaining({ id: 'corporate_domain', score: 20, mode: 'dry_run' }));

      await page.getByRole('tab', { name: 'History' }).click();
      const history = page.getByRole('tabpanel');
      // Who published: the author's e-mail address, not the stored user id.
      await history.getByRole('row').filter({ hasText: 'Corporate domains, tighter bands' }).filter({ hasText: 'live' }).filter({ hasText: OWNER }).waitFor();
      await history.getByRole('row').filter({ hasText: 'seeded from RULES_DIR' }).waitFor();
      await history.getByRole('button', { name: 'Roll back to version 1' }).click();
      const dialog = page.getByRole('dialog');
      await expect(dialog.innerText()).resolves.toContain('published again as a new version');
      await dialog.getByRole('button', { name: 'Roll back to version 1' }).click();
      await dialog.waitFor({ state: 'detached' });
      await history.getByRole('row').filter({ hasText: 'rollback to version 1' }).filter({ hasText: 'live' }).waitFor();

      const after = await adminApi<{ published: { version: number; yaml: string; comment: string } }>('/rule-sets/account_login');
      const first = await adminApi<{ yaml: string }>('/rule-sets/account_login/versions/1');
      expect(after.published.version).toBe(3);
      expect(after.published.comment).toBe('rollback to version 1');
      expect(after.published.yaml).toBe(first.yaml);

      // A version published over a draft (a rollback through the API): publishing the draft as it
      // is would undo it, so the page says so and saves it again first.
      await page.getByRole('tab', { name: 'Draft' }).click();
      await page.getByRole('button', { name: 'Remove ip_tor' }).click();
      await page.getByRole('tab', { name: /^Draft \(v\d+\)$/ }).waitFor();
      const rolledBack = await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/rule-sets/account_login/rollback', headers: owner.write, payload: { version: 2 } });
      expect(rolledBack.statusCode, rolledBack.body).toBe(200);
      const rollback = (rolledBack.json() as { version: number }).version;
      await page.reload();
      await page.getByText(`Version ${rollback} was published after this draft was started`).waitFor();
      await page.getByRole('button', { name: 'Save the draft again' }).click();
      await page.getByRole('tab', { name: `Draft (v${rollback + 1})` }).waitFor();
      await publish(page, 'Without the Tor rule');
      const republished = await adminApi<{ published: { version: number; rules: Array<{ id: string }> } }>('/rule-sets/account_login');
      expect(republished.published.version).toBe(rollback + 1);
      expect(republished.published.rules.map((r) => r.id)).not.toContain('ip_tor');
      clean(opened);
    } finally {
      await opened.context.close();
    }
  });

  it('adds an event type from a copy of another, and discards a draft of it', async () => {
    const opened = await openConsole(browser, server.origin);
    const { page } = opened;
    try {
      await logIn(page, OWNER);
      await page.goto(`${server.origin}/console/#/acme/rules`);
      await page.getByLabel('Event type', { exact: true }).fill('bad type!');
      await page.getByRole('button', { name: 'Add event type' }).click();
      await invalid(page.getByLabel('Event type', { exact: true }));
      await page.getByLabel('Event type', { exact: true }).fill('checkout');
      await page.getByLabel('Start with').selectOption('copy');
      await page.getByLabel('From event type').selectOption('account_register');
      await page.getByRole('button', { name: 'Add event type' }).click();
      await page.getByRole('heading', { level: 1, name: 'Threat rules: checkout' }).waitFor();
      await page.getByRole('cell', { name: 'email_disposable' }).waitFor();

      // A draft, discarded after a confirmation: the live version stays.
      await page.getByRole('tab', { name: 'Draft' }).click();
      await page.getByRole('button', { name: 'Remove email_disposable' }).click();
      await page.getByRole('tab', { name: 'Draft (v2)' }).waitFor();
      await page.getByRole('button', { name: 'Discard draft…' }).click();
      await expect(page.getByRole('dialog').innerText()).resolves.toContain('The live version is untouched');
      await page.getByRole('dialog').getByRole('button', { name: 'Discard draft' }).click();
      await page.getByText('No draft: the first change below starts one').waitFor();
      const checkout = await adminApi<{ draft: unknown; published: { version: number; rules: Array<{ id: string }> } }>('/rule-sets/checkout');
      expect(checkout.draft).toBeNull();
      expect(checkout.published.version).toBe(1);
      expect(checkout.published.rules.map((r) => r.id)).toContain('email_disposable');

      // Rules are shipped for the built-in event types only: the API's message, next to the choice, lists them.
      await page.goto(`${server.origin}/console/#/acme/rules`);
      await page.getByLabel('Event type', { exact: true }).fill('refund');
      await page.getByLabel('Start with').selectOption('default');
      await page.getByLabel('From event type').selectOption('checkout');
      await page.getByRole('button', { name: 'Add event type' }).click();
      await invalid(page.getByLabel('From event type'));
      await page.getByText('no shipped rule set "checkout"; one of: account_login, account_register').waitFor();
      clean(opened);
    } finally {
      await opened.context.close();
    }
  });
});

describe('as an analyst', () => {
  it('reads every tab with no control that changes rules, and can dry-run', async () => {
    const opened = await openConsole(browser, server.origin);
    const { page } = opened;
    try {
      await logIn(page, ANALYST);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Threat rules' }).click();
      await page.locator('.rule-card').first().getByRole('table').waitFor();
      await expect(page.getByRole('button', { name: 'Add event type' }).count()).resolves.toBe(0);

      // An admin's draft in progress: the analyst reads it and its diff.
      const drafted = await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/rule-sets/account_update/draft/rules', headers: owner.write, payload: { rule: { library: 'ip_vpn' } } });
      expect(drafted.statusCode, drafted.body).toBe(201);
      const shadowed = await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/rule-sets/account_update/shadow', headers: owner.write, payload: {} });
      expect(shadowed.statusCode, shadowed.body).toBe(200);
      await openRuleSet(page, server.origin, 'account_update');
      await page.getByRole('tab', { name: /^Draft \(v2\)/, selected: true }).waitFor();
      await page.getByRole('tabpanel').getByRole('cell', { name: 'ip_vpn' }).waitFor();
      await page.getByRole('listitem').filter({ hasText: 'Added ip_vpn' }).waitFor();
      await page.getByText('In shadow: version 2').waitFor();
      // Each tab once its content is in (a control absent from a panel still loading would prove nothing).
      const loaded: Record<string, () => Promise<void>> = {
        Draft: () => page.getByRole('tabpanel').getByRole('cell', { name: 'ip_vpn' }).waitFor(),
        History: () => page.getByRole('row').filter({ hasText: 'seeded from RULES_DIR' }).waitFor(),
        Live: () => page.getByRole('tabpanel').getByRole('cell', { name: 'ip_tor' }).first().waitFor(),
      };
      for (const tab of ['Draft', 'History', 'Live']) {
        await page.getByRole('tab', { name: new RegExp(`^${tab}`) }).click();
        await loaded[tab]!();
        for (const name of ['Add from the library', 'Write a custom rule', 'Publish…', 'Discard draft…', 'Save the draft', /shadow/, /^Roll back/, /^Save /, /^Remove /]) {
          await expect(page.getByRole('button', { name }).count(), `${tab}: ${String(name)}`).resolves.toBe(0);
        }
      }
      // The tabs by keyboard, as a tab list does: Home, End and the arrows move the selection and the focus.
      await page.getByRole('tab', { name: /^Live/ }).click();
      await page.keyboard.press('End');
      await page.getByRole('tab', { name: 'History', selected: true }).waitFor();
      await page.keyboard.press('Home');
      await page.getByRole('tab', { name: /^Live/, selected: true }).waitFor();
      await page.keyboard.press('ArrowRight');
      await page.getByRole('tab', { name: /^Draft/, selected: true }).waitFor();
      await expect.poll(() => page.evaluate('document.activeElement.id')).toBe('tab-draft');

      await page.getByRole('tab', { name: 'Dry run' }).click();
      const request = page.getByLabel('Sample request (JSON)');
      await request.fill('{"ip": ');
      await page.getByRole('button', { name: 'Run' }).click();
      await invalid(request);
      await page.getByText(/Not valid JSON/).waitFor();
      await request.fill(JSON.stringify({ ip: '81.2.69.160', email: 'jane.doe@example.com' }));
      await page.getByRole('button', { name: 'Run' }).click();
      const result = page.getByRole('region', { name: 'Dry run result' });
      await result.getByRole('cell', { name: 'email_disposable' }).waitFor();
      await expect(result.innerText()).resolves.toMatch(/Score \d+: (approve|review|decline)/);
      clean(opened);
    } finally {
      await opened.context.close();
    }
  });
});
