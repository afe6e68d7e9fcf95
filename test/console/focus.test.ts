import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { expectNoAxeViolations } from '../support/axe.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, useConsoleInChromium } from '../support/console.js';

/**
 * Where focus goes, with the keyboard only (issue 31): a new page starts at its main heading; a
 * dialog or the library picker, closed, gives focus back to the control that opened it. And the
 * states met on the way are clean under axe-core.
 */
vi.setConfig({ testTimeout: 2 * BROWSER_TEST_TIMEOUT_MS });

const ctx = useConsoleInChromium();

/** The focused element, as `tag "text"` (the text cut to its start): what a screen reader would announce. */
const focused = (page: Page) => page.evaluate<string>(`(() => {
  const element = document.activeElement;
  return element ? element.tagName.toLowerCase() + ' "' + (element.textContent ?? '').trim().slice(0, 60) + '"' : 'none';
})()`);

/** Focus moves to `to` with Tab (from where it is), then Enter: the keyboard user's click. */
async function tabTo(page: Page, to: string, pressEnter = true): Promise<void> {
  for (let i = 0; i < 80 && !(await focused(page)).endsWith(`"${to}"`); i += 1) await page.keyboard.press('Tab');
  expect(await focused(page)).toMatch(new RegExp(`"${to.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"$`));
  if (pressEnter) await page.keyboard.press('Enter');
}

describe('focus, with the keyboard', () => {
  it('starts a new page at its main heading', async () => {
    const { context, page, troubles } = await openConsole(ctx.browser, ctx.server.origin);
    try {
      await logIn(page, OWNER);
      const sections = page.getByRole('navigation', { name: 'Sections' });
      for (const name of ['Decisions', 'Lists', 'Users', 'Audit log']) {
        await sections.getByRole('link', { name }).focus();
        await page.keyboard.press('Enter');
        await expect.poll(() => focused(page)).toBe(`h1 "${name}"`);
      }
      // Back goes to the page before, and its heading.
      await page.goBack();
      await expect.poll(() => focused(page)).toBe('h1 "Users"');
      // The next Tab goes on from the heading, into the page.
      await page.keyboard.press('Tab');
      await expect.poll(() => page.evaluate("document.querySelector('main').contains(document.activeElement)")).toBe(true);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('opens a rule set from its card, closes the library picker and the Publish and Discard dialogs back to their openers', async () => {
    const { context, page, troubles } = await openConsole(ctx.browser, ctx.server.origin);
    try {
      await logIn(page, OWNER);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Threat rules' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('h1 "Threat rules"');
      await tabTo(page, 'Open account_register');
      await expect.poll(() => focused(page)).toBe('h1 "Threat rules: account_register"');
      await expectNoAxeViolations(page, 'account_register, Live tab');

      await page.getByRole('tab', { name: 'Draft' }).focus();
      await page.keyboard.press('Enter');
      // The library picker: Close, and adding a rule, both give focus back to "Add from the library".
      await tabTo(page, 'Add from the library');
      await page.getByRole('region', { name: 'Add a rule from the library' }).waitFor();
      await expectNoAxeViolations(page, 'account_register, library picker');
      await tabTo(page, 'Close');
      await expect.poll(() => focused(page)).toBe('button "Add from the library"');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Add email_free_provider' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('tab', { name: 'Draft (v2)' }).waitFor();
      await expect.poll(() => focused(page)).toBe('button "Add from the library"');
      await page.getByRole('region', { name: 'Diff of the YAML of account_register' }).waitFor();
      await expectNoAxeViolations(page, 'account_register, Draft tab with its diff');
      // The diff scrolls: it takes focus, so the keyboard can scroll it.
      await page.getByRole('region', { name: 'Diff of the YAML of account_register' }).focus();
      await expect.poll(() => page.evaluate("document.activeElement.matches('pre.diff-text')")).toBe(true);

      // Publish: Escape, then Cancel, each back to "Publish…".
      await tabTo(page, 'Publish…');
      await page.getByRole('dialog').waitFor();
      await expectNoAxeViolations(page, 'account_register, Publish dialog');
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      await expect.poll(() => focused(page)).toBe('button "Publish…"');
      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('button "Cancel"');
      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('button "Publish…"');

      // Discard: Escape back to "Discard draft…"; confirmed, the opener is gone and the heading takes focus.
      await tabTo(page, 'Discard draft…');
      await page.getByRole('dialog').waitFor();
      await page.keyboard.press('Escape');
      await expect.poll(() => focused(page)).toBe('button "Discard draft…"');
      // Back on the opener within the closing render (it runs in a microtask after the cancel), not
      // later: whatever runs after it, a timer or a paint, finds focus where it belongs. (Preact runs
      // a plain effect's cleanup after the next paint; there, focus was still on <body>.)
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor();
      expect(await page.evaluate(`(async () => {
        document.querySelector('dialog').dispatchEvent(new Event('cancel', { cancelable: true }));
        await new Promise((resolve) => queueMicrotask(resolve));
        return document.activeElement.tagName + ' ' + document.activeElement.textContent;
      })()`)).toBe('BUTTON Discard draft…');
      await page.keyboard.press('Enter');
      await tabTo(page, 'Discard draft');
      await page.getByRole('tab', { name: 'Draft', exact: true }).waitFor();
      await expect.poll(() => focused(page)).toMatch(/^(h1 "Threat rules: account_register"|button "Add from the library")$/);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('empty tables', () => {
  it('say there is nothing in them', async () => {
    const { context, page, troubles } = await openConsole(ctx.browser, ctx.server.origin);
    try {
      await logIn(page, OWNER);
      await page.goto(`${ctx.server.origin}/console/#/acme/users`);
      const members = page.getByRole('region', { name: 'Members of acme' });
      await members.getByRole('cell', { name: 'No member yet: add one below.' }).waitFor();
      await expectNoAxeViolations(page, 'Users, no member');
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
