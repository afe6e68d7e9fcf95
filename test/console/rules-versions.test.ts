import type { Page } from 'playwright-core';
import { expect, it, vi } from 'vitest';
import { evaluationBody } from '../support/app.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, openRuleSet, useConsoleInChromium } from '../support/console.js';

/**
 * Versions and hit rates in the console, in Debian's Chromium: a rule file as a team writes it
 * (comments aligned in a column, flow maps) is imported, one score is changed in the draft and
 * published, and History's diff of the two versions shows that line and nothing else; any version
 * is shown as its text. The live rules' hit rates over 24 hours and 7 days equal the counts of a
 * history seeded through the public API, read back from the log itself.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS * 2 });

const ctx = useConsoleInChromium();

const TEAM_FILE = [
  '# Password resets: kept in the rules repository.',
  'description: Risk rules for password_reset.   # shown in the console',
  'thresholds: {review: 25, decline: 50}',
  'rules:',
  '  - library: ip_tor',
  '    score: 40                                 # resets over Tor: review',
  '  - library: email_disposable',
  '    score: 30                                 # throw-away inboxes',
  '  - id: sanctioned_country',
  '    name: Country under sanctions',
  '    score: 50',
  '    when: {field: ip.country_code, in: [KP, IR]}',
  '',
].join('\n');

async function publish(page: Page, comment: string) {
  await page.getByRole('button', { name: 'Publish…' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Comment (required)').fill(comment);
  await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}

it('diffs two versions in History: an edited score is the only line that changed; any version shows its text', async () => {
  const imported = await ctx.server.app.inject({
    method: 'POST', url: '/admin/v1/accounts/acme/rule-files', headers: ctx.owner.write,
    payload: { files: [{ event_type: 'password_reset', yaml: TEAM_FILE }], comment: 'From the rules repository' },
  });
  expect(imported.statusCode, imported.body).toBe(200);
  const v = (imported.json() as { files: Array<{ version: number }> }).files[0]!.version;

  const opened = await openConsole(ctx.browser, ctx.server.origin);
  const { page } = opened;
  try {
    await logIn(page, OWNER);
    await openRuleSet(page, ctx.server.origin, 'password_reset');
    await page.getByRole('tab', { name: 'Draft' }).click();
    // Two rules edited, then one Save: each changed row is marked, the bar counts them.
    await page.getByLabel('Score of email_disposable').fill('35');
    await page.getByLabel('Score of ip_tor').fill('45');
    const bar = page.getByRole('region', { name: 'Unsaved changes' });
    await bar.getByText('2 changes not saved').waitFor();
    await expect(page.locator('tr.row-unsaved').count()).resolves.toBe(2);
    await expectNoAxeViolations(page, 'The draft with two unsaved changes');
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/rules-one-save.png`, fullPage: true });
    let saves = 0;
    page.on('request', (r) => { if (/\/rule-sets\/password_reset\/draft/.test(r.url()) && r.method() !== 'GET') saves += 1; });
    await bar.getByRole('button', { name: 'Save the draft' }).click();
    await bar.getByText('All changes saved.').waitFor();
    expect(saves).toBe(1);
    const draft = await ctx.server.app.inject({ url: '/admin/v1/accounts/acme/rule-sets/password_reset', headers: ctx.owner.read });
    const scores = (draft.json() as { draft: { rules: Array<{ id: string; score: number }> } }).draft.rules.map((r) => [r.id, r.score]);
    expect(scores).toEqual([['ip_tor', 45], ['email_disposable', 35], ['sanctioned_country', 50]]);
    await page.getByRole('button', { name: 'Publish…' }).waitFor();
    await publish(page, 'Tor to 45, disposable to 35');

    await page.getByRole('tab', { name: 'History' }).click();
    await page.getByLabel('Compare version').selectOption(String(v));
    await page.getByLabel('with version').selectOption(String(v + 1));
    await page.getByRole('button', { name: 'Compare' }).click();
    const diff = page.getByRole('region', { name: `Diff of the YAML of password_reset, version ${v} to ${v + 1}` });
    await diff.waitFor();
    const lines = (await diff.innerText()).split('\n');
    expect(lines.filter((l) => /^[-+](?![-+]{2})/.test(l))).toEqual([
      '-    score: 40                                 # resets over Tor: review',
      '+    score: 45                                 # resets over Tor: review',
      '-    score: 30                                 # throw-away inboxes',
      '+    score: 35                                 # throw-away inboxes',
    ]);
    await page.getByText('Changed email_disposable: score 30 → 35').waitFor();
    await page.getByText('Changed ip_tor: score 40 → 45').waitFor();
    await expectNoAxeViolations(page, 'History, two versions compared');

    await page.getByRole('button', { name: `Show version ${v}` }).click();
    const text = page.getByRole('region', { name: `Rule file of version ${v}` });
    await expect.poll(() => text.innerText()).toBe(TEAM_FILE);
    await expectNoAxeViolations(page, 'History, a version shown');
    expect(opened.troubles).toEqual([]);
  } finally {
    await opened.context.close();
  }
});

it("shows each live rule's hit rates over 24 hours and 7 days, equal to the log's counts for a seeded history", async () => {
  const made = await ctx.server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/keys', headers: ctx.owner.write });
  expect(made.statusCode, made.body).toBe(201);
  const key = (made.json() as { key: string }).key;
  // Disposable and ordinary addresses, Tor and not; the DNS here never answers, so deliverability is unknown.
  const seed = [
    { email: 'a@mailinator.com', ip: '81.2.69.160' }, { email: 'b@mailinator.com', ip: '81.2.69.161' },
    { email: 'c@example.com', ip: '81.2.69.162' }, { email: 'd@example.org', ip: '2001:db8::7' }, { email: 'e@mailinator.com', ip: '81.2.69.163' },
  ];
  for (const request of seed) {
    const answer = await fetch(`${ctx.server.origin}/v1/risk/evaluate`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(evaluationBody({ ...request, event_type: 'account_register' })),
    });
    expect(answer.status).toBe(200);
  }
  await ctx.server.store.log.flush();

  // The log's own counts: every logged answer of account_register read back.
  const rows = await ctx.server.store.engine.db.selectFrom('evaluations').select('response').where('account_id', '=', 'acme').where('event_type', '=', 'account_register').execute();
  const counted = new Map<string, { fired: number; unknown: number }>();
  for (const row of rows) {
    const answer = JSON.parse(String(row.response)) as { score: { details: Array<{ rule_id: string }> }; dry_run?: Array<{ rule_id: string }>; unavailable: string[] };
    const bump = (id: string, what: 'fired' | 'unknown') => counted.set(id, { fired: 0, unknown: 0, ...counted.get(id), [what]: (counted.get(id)?.[what] ?? 0) + 1 });
    for (const d of [...answer.score.details, ...(answer.dry_run ?? [])]) bump(d.rule_id, 'fired');
    for (const u of answer.unavailable.filter((u) => u.startsWith('rule:'))) bump(u.slice(5), 'unknown');
  }
  expect(rows.length).toBe(seed.length);
  expect(counted.get('email_disposable')?.fired).toBe(3);

  const opened = await openConsole(ctx.browser, ctx.server.origin);
  const { page } = opened;
  try {
    await logIn(page, OWNER);
    await page.goto(`${ctx.server.origin}/console/#/acme/rules/account_register`);
    await page.getByRole('tab', { name: /^Live/ }).click();
    await page.getByText(`out of ${seed.length} evaluations logged in the last 24 hours and ${seed.length} in the last 7 days`).waitFor();
    const table = page.getByRole('table', { name: 'Live rules of account_register' });
    const percent = (n: number) => `${(Math.round((n / seed.length) * 1000) / 10).toLocaleString('en')} %`;
    for (const row of await table.locator('tbody tr').all()) {
      const id = await row.locator('code').first().innerText();
      const { fired, unknown } = counted.get(id) ?? { fired: 0, unknown: 0 };
      const expected = `fired ${fired} (${percent(fired)})${unknown > 0 ? `\nunknown ${unknown} (${percent(unknown)})` : ''}`;
      const cells = row.locator('td.hits');
      expect({ id, day: await cells.nth(0).innerText(), week: await cells.nth(1).innerText() }).toEqual({ id, day: expected, week: expected });
    }
    await expectNoAxeViolations(page, 'Live rules with hit rates');
    expect(opened.troubles).toEqual([]);
  } finally {
    await opened.context.close();
  }
});

/**
 * The editor's whole text replaced as a user pastes a file (CodeMirror handles the paste itself;
 * Playwright's insertText goes through Chromium's editing commands, which write style attributes the CSP refuses).
 */
async function replaceText(page: Page, text: string) {
  await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(text)})`);
  await page.getByRole('textbox', { name: /\(YAML\)$/ }).click();
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Control+v');
}

it('edits the draft as YAML: highlighted, a bad value marked at its line with the API\'s message, saved as typed', async () => {
  const opened = await openConsole(ctx.browser, ctx.server.origin);
  const { page } = opened;
  try {
    await logIn(page, OWNER);
    await openRuleSet(page, ctx.server.origin, 'account_update');
    await page.getByRole('tab', { name: 'Draft' }).click();
    await page.getByRole('button', { name: 'Edit the YAML' }).click();
    const editor = page.getByRole('textbox', { name: 'Rule file of account_update (YAML)' });
    await editor.waitFor();

    // Highlighted: the shipped file's comments and keys are styled tokens, not plain text.
    expect(await page.locator('.cm-content .cm-line span').count()).toBeGreaterThan(10);

    const bad = ['# Updates: tried in the YAML view.', 'rules:', '  - library: ip_tor', '    score: 500   # too much', ''].join('\n');
    await replaceText(page, bad);
    const problems = page.getByRole('region', { name: 'YAML of the draft' }).locator('.yaml-problems');
    await problems.getByText(/^Line 4: rules\[0\]\.score: /).waitFor();
    // The same message, at line 4 in the editor: the range marked and a marker in the gutter beside it.
    const marked = page.locator('.cm-line').filter({ has: page.locator('.cm-lintRange-error') });
    await expect.poll(() => marked.innerText()).toBe('    score: 500   # too much');
    await page.locator('.cm-gutter-lint .cm-lint-marker-error').waitFor();
    await expectNoAxeViolations(page, 'The YAML view, a value refused at its line');

    const good = bad.replace('score: 500', 'score: 50');
    await replaceText(page, good);
    await page.getByText('The text is valid.').waitFor();
    await page.getByRole('button', { name: 'Save the YAML as the draft' }).click();
    await expect.poll(async () => {
      const stored = await ctx.server.app.inject({ url: '/admin/v1/accounts/acme/rule-sets/account_update', headers: ctx.owner.read });
      return (stored.json() as { draft: { yaml: string } | null }).draft?.yaml;
    }).toBe(good);
    expect(opened.troubles).toEqual([]);
  } finally {
    await opened.context.close();
  }
});

it('asks before unsaved draft edits are lost: another tab, another page of the console, closing the browser tab', async () => {
  const opened = await openConsole(ctx.browser, ctx.server.origin);
  const { page, troubles } = opened;
  try {
    await logIn(page, OWNER);
    await openRuleSet(page, ctx.server.origin, 'account_login');
    await page.getByRole('tab', { name: 'Draft' }).click();
    const score = page.getByLabel('Score of ip_tor');
    await score.fill('33');
    // Each time the question is answered "stay" (the page's dialog handler dismisses it).
    const asked = () => troubles.filter((t) => t.startsWith('dialog: ')).length;
    await page.getByRole('tab', { name: /^Live/ }).click();
    await expect.poll(asked).toBe(1);
    expect(troubles[0]).toBe('dialog: confirm Leave this page? Your changes that are not saved will be lost.');
    await expect(page.getByRole('tab', { name: 'Draft' }).getAttribute('aria-selected')).resolves.toBe('true');
    await page.getByRole('link', { name: 'Decisions' }).click();
    await expect.poll(asked).toBe(2);
    await expect.poll(() => page.evaluate('location.hash')).toBe('#/acme/rules/account_login');
    await expect(score.inputValue()).resolves.toBe('33');
    await page.close({ runBeforeUnload: true });
    await expect.poll(asked).toBe(3);
    expect(troubles[2]).toMatch(/^dialog: beforeunload/);
    expect(page.isClosed()).toBe(false);

    // Discarded, the saved values are back and nothing is asked; edited again, the one Save keeps it.
    await page.getByRole('button', { name: 'Discard unsaved changes' }).click();
    await expect(score.inputValue()).resolves.toBe('30');
    await page.getByText('No changes yet.').waitFor();
    await score.fill('33');

    // Closing the YAML editor with edits in it asks too (and stays open when the answer is "stay").
    await page.getByRole('button', { name: 'Edit the YAML' }).click();
    const yaml = page.getByRole('textbox', { name: 'Rule file of account_login (YAML)' });
    await yaml.waitFor();
    await replaceText(page, '# About to be closed.\nrules: []\n');
    await page.getByRole('button', { name: 'Close the YAML editor' }).click();
    await expect.poll(asked).toBe(4);
    expect(troubles[3]).toBe('dialog: confirm Close the YAML editor? Your changes to the YAML that are not saved will be lost.');
    await yaml.waitFor();
    await page.getByRole('button', { name: 'Undo all changes' }).click();
    await page.getByRole('button', { name: 'Close the YAML editor' }).click();
    await yaml.waitFor({ state: 'detached' });

    // Saved, nothing is lost: no question.
    await page.getByRole('button', { name: 'Save the draft' }).click();
    await page.getByRole('tab', { name: 'Draft (v2)' }).waitFor();
    await page.getByRole('tab', { name: /^Live/ }).click();
    await page.getByRole('region', { name: 'Live version' }).waitFor();
    expect(troubles.length).toBe(4);
  } finally {
    await opened.context.close();
  }
});
