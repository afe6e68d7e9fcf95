import { describe, expect, it, vi } from 'vitest';
import { evaluationBody } from '../support/app.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, useConsoleInChromium } from '../support/console.js';

/**
 * Issue 15's journey, in one browser session as a new user would take it: log in, generate a key
 * and copy it, evaluate with it through the public API, add a library rule to account_register and
 * publish it, see the next decision fire it, open that decision, label it. Each page's own tests
 * go further; this one proves they fit together.
 */
vi.setConfig({ testTimeout: 2 * BROWSER_TEST_TIMEOUT_MS });

const ctx = useConsoleInChromium();

describe('a new user\'s first rule change, in the browser', () => {
  it('key, evaluation, library rule published, the next decision fires it, opened and labelled', async () => {
    const { context, page, requests, troubles } = await openConsole(ctx.browser, ctx.server.origin);
    const sections = page.getByRole('navigation', { name: 'Sections' });
    const evaluate = async (key: string) => {
      const answer = await fetch(`${ctx.server.origin}/v1/risk/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(evaluationBody({ email: 'jane.doe@gmail.com' })),
      });
      expect(answer.status).toBe(200);
      return (await answer.json()) as { id: string; score: { fraud_score: number; details: Array<{ rule_name: string }> } };
    };
    try {
      await logIn(page, OWNER);
      await page.getByLabel('Account').selectOption('acme');
      await page.getByRole('button', { name: 'Generate a key' }).click();
      const key = await page.getByLabel('New API key', { exact: true }).inputValue();
      await page.getByRole('button', { name: 'Copy key' }).click();
      await page.getByText('Copied').waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);

      // Before the change: a free mailbox scores nothing.
      const before = await evaluate(key);
      expect(before.score.fraud_score).toBe(0);

      await sections.getByRole('link', { name: 'Threat rules' }).click();
      await page.locator('.rule-card').first().getByRole('link', { name: 'Open account_register' }).click();
      await page.getByRole('tab', { name: 'Draft' }).click();
      await page.getByRole('button', { name: 'Add from the library' }).click();
      await page.getByRole('region', { name: 'Add a rule from the library' }).getByRole('button', { name: 'Add email_free_provider' }).click();
      await page.getByRole('tab', { name: 'Draft (v2)' }).waitFor();
      await page.getByRole('button', { name: 'Publish…' }).click();
      await page.getByRole('dialog').getByLabel('Comment (required)').fill('Weigh free mailboxes');
      await page.getByRole('dialog').getByRole('button', { name: 'Publish', exact: true }).click();
      await page.getByRole('tab', { name: 'Live (v2)', selected: true }).waitFor();

      // The next decision fires it (the replica that published reloads at once).
      const after = await evaluate(key);
      expect(after.score.details.map((d) => d.rule_name)).toContain('Email address is from a free provider');
      await ctx.server.store.log.flush();

      await sections.getByRole('link', { name: 'Decisions' }).click();
      await page.getByLabel('Rule fired').fill('email_free_provider');
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => page.locator('table.decisions tbody tr').count()).toBe(1);
      await page.getByRole('link', { name: `Decision ${after.id}` }).click();
      const fired = page.getByRole('region', { name: 'Why this score' }).locator('tr.fired');
      await fired.filter({ hasText: 'email_free_provider' }).waitFor();
      await page.getByRole('button', { name: 'Label fraud' }).click();
      await page.getByRole('region', { name: 'Label' }).getByText('Labelled fraud').waitFor();

      const stored = await ctx.server.app.inject({ url: `/admin/v1/accounts/acme/decisions/${after.id}`, headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } });
      expect(stored.json()).toMatchObject({ rules: expect.arrayContaining(['email_free_provider']), labelled: { label: 'fraud' }, rule_set: { version: 2 } });
      expect(requests.filter((url) => !url.startsWith(ctx.server.origin))).toEqual([]);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
