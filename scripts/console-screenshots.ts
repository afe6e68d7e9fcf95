import '../bench/temp-root.js';
import { mkdirSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildConsoleIfStale } from './build-console.js';
import { createUser } from '../test/support/admin.js';
import { evaluationBody } from '../test/support/app.js';
import { seedBacktest } from '../test/support/backtest-seed.js';
import { launchChromium } from '../test/support/browser.js';
import { logIn, openConsole, OWNER, startConsoleServer } from '../test/support/console.js';

/**
 * `npm run console:screenshots`: one 1280x800 screenshot of each console page into docs/console/,
 * taken in Debian's Chromium from the real service (a temporary SQLite store, loopback only),
 * as the README shows them.
 */
const OUT = new URL('../docs/console/', import.meta.url);
mkdirSync(OUT, { recursive: true });
await buildConsoleIfStale();
// Webhooks may reach the loopback receiver the Webhooks page's screenshot sends to.
const server = await startConsoleServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
// An account `shop` whose rules hold addresses of a test range for review: the Review page's items.
const REVIEW_RULES = `thresholds: { review: 20, decline: 60 }
rules:
  - id: test_range
    name: Address in the test range
    score: 30
    when: { field: ip.address, cidr: [203.0.113.0/24] }
  - library: list_block
    score: 100
`;
await server.store.accounts.create('shop', 'Shop', { files: [{ eventType: 'account_register', yaml: REVIEW_RULES }], comment: 'screenshots' }, 'screenshots');
const shopKey = (await server.store.accounts.createKey('shop', { actor: 'screenshots', seed: { files: [], comment: '' } })).key;
await server.app.reloadConfiguration();
await createUser(server.store, 'analyst@example.com', { roles: { acme: 'analyst' } });
const browser = await launchChromium();
try {
  const { context, page, troubles } = await openConsole(browser, server.origin);
  const shoot = async (name: string) => {
    await page.screenshot({ path: new URL(`${name}.png`, OUT).pathname });
    console.log(`docs/console/${name}.png`);
  };
  await shoot('login');
  await logIn(page, OWNER);
  await page.goto(`${server.origin}/console/#/acme/start`);
  await page.getByRole('button', { name: 'Generate a key' }).click();
  await page.getByRole('button', { name: 'Copy key' }).waitFor();
  await shoot('getting-started');
  for (const [route, heading, name] of [['users', 'Users', 'users'], ['sources', 'Data sources', 'data-sources'], ['audit', 'Audit log', 'audit-log']] as const) {
    await page.goto(`${server.origin}/console/#/acme/${route}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    // (Not waitForFunction: the console's CSP refuses the string evaluation it uses.)
    const loading = page.locator('main [role=status]', { hasText: /^Loading/ });
    while ((await loading.count()) > 0) await loading.first().waitFor({ state: 'detached' });
    await shoot(name);
  }
  // Threat rules: the cards, then account_register with a draft and the library picker open.
  await page.goto(`${server.origin}/console/#/acme/rules`);
  await page.locator('.rule-card').nth(3).getByRole('table').waitFor();
  await shoot('threat-rules');
  await page.goto(`${server.origin}/console/#/acme/rules/account_register`);
  await page.getByRole('tab', { name: 'Draft' }).click();
  await page.getByRole('button', { name: 'Add from the library' }).click();
  await page.getByRole('button', { name: 'Add email_free_provider' }).click();
  await page.getByRole('tab', { name: 'Draft (v2)' }).waitFor();
  // The custom-rule editor, two conditions (the second negated), with the API's refusal of a
  // regular expression next to the value of the first.
  await page.getByRole('button', { name: 'Write a custom rule' }).click();
  const editor = page.getByRole('region', { name: 'Write a custom rule' });
  await editor.getByLabel('Rule id').fill('corporate_domain');
  await editor.getByLabel('Name').fill('Corporate domain from outside the office');
  await editor.getByLabel('Operator').selectOption('matches');
  await editor.getByLabel('Value', { exact: true }).fill('^(example\\.com');
  await editor.getByRole('button', { name: 'Combine condition with another' }).click();
  const second = editor.getByRole('group', { name: 'Condition 2', exact: true });
  await second.getByLabel('Field', { exact: true }).selectOption('ip.address');
  await second.getByLabel('Operator').selectOption('cidr');
  await second.getByLabel('Value', { exact: true }).fill('198.51.100.0/24');
  await second.getByLabel('Negate condition 2').check();
  await editor.getByRole('button', { name: 'Add to the draft' }).click();
  await page.getByText(/not a valid RE2 regular expression/).waitFor();
  await editor.getByRole('heading', { name: 'Write a custom rule' }).scrollIntoViewIfNeeded();
  await editor.evaluate((element) => (element as unknown as { scrollIntoView(): void }).scrollIntoView());
  await shoot('rule-set');
  // A finished backtest of a draft that adds a rule (the whole report: the page is taller than the window).
  const seed = await seedBacktest(server, OWNER);
  await page.goto(`${server.origin}/console/#/acme/rules/account_register/backtest`);
  await page.getByRole('region', { name: 'Start a backtest' }).getByLabel('Rules to test').locator('option', { hasText: 'draft' }).waitFor({ state: 'attached' });
  await page.getByRole('button', { name: 'Start backtest' }).click();
  await page.getByRole('status').filter({ hasText: 'Done' }).waitFor();
  await page.locator('.state-chart canvas').waitFor();
  await page.screenshot({ path: new URL('backtest.png', OUT).pathname, fullPage: true });
  console.log('docs/console/backtest.png');
  // Decisions: a few more evaluations, one declined (a disposable mailbox), one list entry.
  for (const [email, ip] of [['jane.doe@mailinator.com', '81.2.69.160'], ['sam@example.net', '198.51.100.4'], ['li.wei@example.com', '192.0.2.77']]) {
    await fetch(`${server.origin}/v1/risk/evaluate`, {
      method: 'POST', headers: { authorization: `Bearer ${seed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(evaluationBody({ email, ip, user: { user_id: `u-${ip!.split('.').pop()}` } })),
    });
  }
  await server.store.log.flush();
  await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/lists', headers: seed.owner.write, payload: { list: 'block', kind: 'domain', value: 'mailinator.com', reason: 'Disposable mailboxes used in the October card-testing wave' } });
  await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/lists', headers: seed.owner.write, payload: { list: 'allow', kind: 'ip', value: '192.0.2.0/28', reason: 'Office network', expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() } });
  await page.goto(`${server.origin}/console/#/acme/decisions`);
  await page.locator('.states-over-time canvas').waitFor();
  await page.locator('table.decisions tbody tr').nth(5).waitFor();
  await shoot('decisions');
  await page.locator('table.decisions tbody tr', { hasText: 'mailinator.com' }).getByRole('link').first().click();
  await page.getByRole('region', { name: 'Why this score' }).locator('tr.fired').first().waitFor();
  await page.locator('.position canvas').waitFor();
  await page.screenshot({ path: new URL('decision-detail.png', OUT).pathname, fullPage: true });
  console.log('docs/console/decision-detail.png');
  // The live rules of account_register with their hit rates (the evaluations above), then History comparing the live version with the draft.
  await page.goto(`${server.origin}/console/#/acme/rules/account_register`);
  await page.getByRole('tab', { name: /^Live/ }).click();
  await page.locator('.hit-summary').waitFor();
  await shoot('rule-hit-rates');
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByRole('button', { name: 'Compare' }).click();
  await page.locator('pre.diff-text').waitFor();
  await page.screenshot({ path: new URL('rule-history.png', OUT).pathname, fullPage: true });
  console.log('docs/console/rule-history.png');
  // The draft in the YAML editor, a score out of range marked at its line.
  await page.getByRole('tab', { name: 'Draft (v2)' }).click();
  await page.getByRole('button', { name: 'Edit the YAML' }).click();
  const yamlText = page.getByRole('textbox', { name: 'Rule file of account_register (YAML)' });
  await yamlText.waitFor();
  await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify([
    '# Sign-ups: the core checks, tuned after the October wave.',
    'description: Risk rules for account_register.',
    'thresholds: {review: 20, decline: 40}',
    'rules:',
    '  - library: email_disposable    # throw-away inboxes',
    '    score: 140                   # typo: 40',
    '  - library: ip_tor',
    '    mode: dry_run',
    '',
  ].join('\n'))})`);
  await yamlText.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Control+v');
  await page.locator('.yaml-problems').waitFor();
  await page.locator('.yaml-host').scrollIntoViewIfNeeded();
  await shoot('rule-yaml');
  await page.goto(`${server.origin}/console/#/acme/lists`);
  await page.getByRole('cell', { name: 'mailinator.com', exact: true }).waitFor();
  await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
  await shoot('lists');
  // Review: three items waiting, one claimed; an item being declined with its device blocked; the IP address's page.
  const held = [
    { ip: '203.0.113.7', email: 'carla.mendes@example.com', user: { user_id: 'usr_1842' }, device_intelligence: { device_hash: 'ab'.repeat(32) } },
    { ip: '203.0.113.7', email: 'j.smith+promo@example.org', user: { user_id: 'usr_1907' }, device_intelligence: { device_hash: 'ab'.repeat(32) } },
    { ip: '203.0.113.41', email: 'noreply.test@example.net', user: { user_id: 'usr_2011' } },
  ];
  for (const body of held) {
    await fetch(`${server.origin}/v1/risk/evaluate`, { method: 'POST', headers: { authorization: `Bearer ${shopKey}`, 'content-type': 'application/json' }, body: JSON.stringify(evaluationBody(body)) });
  }
  await server.store.log.flush();
  await page.goto(`${server.origin}/console/#/shop/review`);
  const queue = page.locator('table.queue tbody tr');
  await queue.nth(2).waitFor();
  await queue.first().getByRole('button', { name: /^Claim/ }).click();
  await queue.first().getByText(/claimed by/).waitFor();
  await shoot('review');
  await queue.first().getByRole('link', { name: /^Open/ }).click();
  await page.getByRole('heading', { level: 2, name: /^The evaluation/ }).waitFor();
  await page.getByLabel('Decline: it was abuse').check();
  await page.getByRole('checkbox', { name: /Block this device/ }).check();
  await page.getByLabel('Reason').fill('Same device as two sign-ups from the card-testing range');
  await page.screenshot({ path: new URL('review-item.png', OUT).pathname, fullPage: true });
  console.log('docs/console/review-item.png');
  await page.getByRole('link', { name: '203.0.113.7', exact: true }).click();
  await page.getByRole('region', { name: 'Seen with' }).getByRole('link').first().waitFor();
  await page.locator('section[aria-labelledby=evaluations] tbody tr').nth(1).waitFor();
  await page.screenshot({ path: new URL('entity-ip.png', OUT).pathname, fullPage: true });
  console.log('docs/console/entity-ip.png');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${server.origin}/console/#/shop/review`);
  await queue.nth(2).waitFor();
  await shoot('review-390px');
  await page.setViewportSize({ width: 1280, height: 800 });
  // Webhooks: an endpoint whose receiver answered a test with 503, then 204, and the delivery log.
  let answer = 503;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(answer).end(answer === 204 ? '' : 'busy'));
  }).listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/risk`;
  await page.goto(`${server.origin}/console/#/acme/webhooks`);
  await page.getByLabel('URL').fill(hook);
  await page.getByRole('checkbox', { name: /evaluation\.declined/ }).check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByLabel('Signing secret', { exact: true }).waitFor();
  await page.getByRole('button', { name: `Send test to ${hook}` }).click();
  await page.getByText(/^Test delivery failed/).waitFor();
  answer = 204;
  await page.getByRole('button', { name: `Send test to ${hook}` }).click();
  await page.getByText(/^Test delivery delivered/).waitFor();
  await page.getByText(/^204 · \d+ ms$/).waitFor();
  await page.screenshot({ path: new URL('webhooks.png', OUT).pathname, fullPage: true });
  console.log('docs/console/webhooks.png');
  receiver.close();
  if (troubles.length > 0) throw new Error(`the pages met problems: ${troubles.join('; ')}`);
  await context.close();
} finally {
  await browser.close();
  await server.app.close();
}
