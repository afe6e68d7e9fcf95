import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * The rules a console page is held to: WCAG 2.0 and 2.1, levels A and AA, and axe's best practices.
 * axe-core's source is evaluated through the DevTools protocol (Playwright's `evaluate`), which the
 * page's Content-Security-Policy does not apply to: the console is checked under its real CSP.
 */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

/**
 * Waits for the page's "Loading …" messages to go, runs axe-core on the page and fails with one line per violation and element
 * (`label`, the rule, its impact, the element and axe's summary of what is wrong). Call it once the
 * state to check is on screen: `await expectNoAxeViolations(page, 'Users, empty')`.
 */
export async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  await expect.poll(() => page.getByText(/^Loading .*…$/).count(), { message: `${label} still loading` }).toBe(0);
  const { violations } = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
  const found = violations.flatMap((v) =>
    v.nodes.map((node) => `${label}: ${v.id} (${v.impact ?? 'unknown'}) at ${node.target.join(' ')}: ${node.failureSummary?.replace(/\s+/g, ' ').trim() ?? v.help}`),
  );
  expect(found, `axe-core found ${found.length} violation(s) on ${label}`).toEqual([]);
}
