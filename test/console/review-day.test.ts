import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser, login } from '../support/admin.js';
import { evaluationBody, KEY_A } from '../support/app.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchChromium } from '../support/browser.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, OWNER, startConsoleServer, type ConsoleServer } from '../support/console.js';

/**
 * An analyst's day in Chromium over the real service (issue 27): evaluations answered `review`
 * arrive in the queue (counts in the navigation); Alice claims the oldest, opens its IP address's
 * page from it, declines it and blocks its device in the same step; Bob, who had the same item
 * open, is told she resolved it first and his resolution is not kept; the device's next evaluation
 * declines; the caller's webhook receiver (a real HTTP server on loopback) gets `review.resolved`
 * with a signature the Node example's verifyWebhook accepts; the caller's backend reads the
 * outcome with GET /v1/risk/evaluations/{id}; the Decisions page shows a new evaluation without a
 * reload; an entity's Block asks for a reason first. Every page and state is checked with axe-core.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS * 3 });

const RULES = `
thresholds: { review: 20, decline: 60 }
rules:
  - id: test_range
    name: Address in the test range
    score: 30
    when: { field: ip.address, cidr: [203.0.113.0/24] }
  - library: list_block
    score: 100
`;
const DEVICE = 'ab'.repeat(32);
const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

let server: ConsoleServer;
let browser: Browser;
const made: string[] = [];
type Verify = (secret: string, headers: Record<string, string | string[] | undefined>, body: string) => boolean;
let verifyWebhook: Verify;
let receiver: Server;
let secret: string;
const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];

async function evaluate(overrides: Record<string, unknown>): Promise<{ id: string; score: { state: string; fraud_score: number } }> {
  const answer = await fetch(`${server.origin}/v1/risk/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    body: JSON.stringify(evaluationBody({ event_type: 'signup', ...overrides })),
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as { id: string; score: { state: string; fraud_score: number } };
}

beforeAll(async () => {
  const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
  writeFileSync(join(rules, 'signup.yaml'), RULES);
  // The caller's webhook receiver, on loopback (WEBHOOK_ALLOW_PRIVATE), checking with the example's code.
  ({ verifyWebhook } = (await import('../../examples/node/webhook-receiver.mjs' as string)) as { verifyWebhook: Verify });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  }).listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  server = await startConsoleServer({ env: { RULES_DIR: rules, WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const owner = await login(server.app, OWNER);
  const endpoint = await server.app.inject({
    method: 'POST', url: '/admin/v1/accounts/default/webhooks', headers: owner.write,
    payload: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/risk`, events: ['review.resolved'] },
  });
  expect(endpoint.statusCode, endpoint.body).toBe(201);
  secret = endpoint.json().secret as string;
  await createUser(server.store, ALICE, { roles: { default: 'analyst' } });
  await createUser(server.store, BOB, { roles: { default: 'analyst' } });
  const people = [
    { ip: '203.0.113.7', email: 'first@example.com', user: { user_id: 'u-1' }, device_intelligence: { device_hash: DEVICE } },
    { ip: '203.0.113.7', email: 'second@example.org', user: { user_id: 'u-2' } },
    { ip: '203.0.113.9', email: 'third@example.net', user: { user_id: 'u-3' } },
  ];
  for (const body of people) {
    const answer = await evaluate(body);
    expect(answer.score.state).toBe('review');
    made.push(answer.id);
  }
  await server.store.log.flush();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
  receiver?.close();
});

describe('an analyst\'s day', () => {
  it('works the queue: claim, pivot, decline and block, a colleague refused, the backend told', async () => {
    const alice = await openConsole(browser, server.origin);
    const bob = await openConsole(browser, server.origin);
    try {
      const page = alice.page;
      await logIn(page, ALICE);
      await page.goto(`${server.origin}/console/#/default/decisions`);
      const nav = page.getByRole('navigation', { name: 'Sections' });
      await expect.poll(() => nav.getByRole('link', { name: /^Review/ }).textContent()).toBe('Review 3 open 0 claimed');
      await nav.getByRole('link', { name: /^Review/ }).click();
      await page.getByRole('heading', { level: 1, name: 'Review' }).waitFor();
      const rows = page.locator('table.queue tbody tr');
      await expect.poll(() => rows.count()).toBe(3);
      // Oldest first, people by e-mail address, values as links to their pages.
      await expect(rows.first().getByRole('link', { name: 'first@example.com', exact: true }).count()).resolves.toBe(1);
      await expectNoAxeViolations(page, 'Review, three open');

      await rows.first().getByRole('button', { name: 'Claim first@example.com' }).click();
      await expect.poll(() => rows.first().getByRole('cell').nth(4).textContent()).toBe(`claimed by you (${ALICE})`);
      await expect.poll(() => nav.getByRole('link', { name: /^Review/ }).textContent()).toBe('Review 2 open 1 claimed');
      // "Me" among the filters finds it.
      await page.getByLabel('Assignee').selectOption({ label: 'me' });
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => rows.count()).toBe(1);

      // Bob opens the same item before Alice resolves it.
      await logIn(bob.page, BOB);
      await bob.page.goto(`${server.origin}/console/#/default/review/${made[0]}`);
      await bob.page.getByRole('heading', { level: 2, name: /^Waiting/ }).waitFor();
      await expect.poll(() => bob.page.getByRole('heading', { level: 2, name: /^Waiting/ }).textContent()).toMatch(`claimed by ${ALICE}`);

      // Alice opens the item, then the IP address's page from it.
      await rows.first().getByRole('link', { name: 'Open first@example.com' }).click();
      await page.getByRole('heading', { level: 1, name: 'Review item' }).waitFor();
      await page.getByRole('heading', { level: 2, name: /^The evaluation/ }).waitFor();
      await expectNoAxeViolations(page, 'Review item, claimed');
      await page.getByRole('link', { name: '203.0.113.7', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'IP address 203.0.113.7' }).waitFor();
      const linked = page.getByRole('region', { name: 'Seen with' });
      await expect.poll(() => linked.getByRole('link', { name: 'u-1', exact: true }).count()).toBe(1);
      await expect(linked.getByRole('link', { name: 'u-2', exact: true }).count()).resolves.toBe(1);
      await expect(linked.getByRole("link", { name: new RegExp(DEVICE) }).count()).resolves.toBe(1);
      await expect.poll(() => page.locator('section[aria-labelledby=evaluations] tbody tr').count()).toBe(2);
      await expectNoAxeViolations(page, 'IP address page');
      await page.goBack();
      await page.getByRole('heading', { level: 1, name: 'Review item' }).waitFor();

      // Resolving needs an outcome and a reason, said for people.
      await page.getByRole('button', { name: 'Resolve' }).click();
      await page.getByText('Choose approve or decline.').waitFor();
      await page.getByText('Enter a reason: whoever reads this next needs it.').waitFor();
      await expectNoAxeViolations(page, 'Review item, resolution incomplete');
      await page.getByLabel('Decline: it was abuse').check();
      await page.getByRole('checkbox', { name: /Block this device/ }).check();
      await page.getByLabel('Reason').fill('Same device as three chargebacks');

      // Bob has his resolution ready too.
      await bob.page.getByLabel('Approve: it was a real user').check();
      await bob.page.getByLabel('Reason').fill('Looks fine to me');

      await page.getByRole('button', { name: 'Resolve' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 2, name: /^Waiting/ }).textContent()).toMatch(/decline by you/);
      await expect(page.getByRole('button', { name: 'Resolve' }).count()).resolves.toBe(0);
      await expectNoAxeViolations(page, 'Review item, resolved');

      await bob.page.getByRole('button', { name: 'Resolve' }).click();
      const refusal = bob.page.getByRole('alert').filter({ hasText: 'Someone resolved this item first.' });
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain(`decline by ${ALICE}`);
      expect(await refusal.textContent()).toContain('Your resolution was not saved.');
      await expectNoAxeViolations(bob.page, 'Review item, a colleague resolved it first');

      // The caller's receiver is told, signed: one review.resolved for this item.
      const resolvedFor = () => received.filter((r) => {
        const event = JSON.parse(r.body) as { type: string; data: { evaluation_id?: string } };
        return event.type === 'review.resolved' && event.data.evaluation_id === made[0];
      });
      await expect.poll(resolvedFor, { timeout: 15_000 }).toHaveLength(1);
      const delivery = resolvedFor()[0]!;
      expect(verifyWebhook(secret, delivery.headers, delivery.body)).toBe(true);
      expect(JSON.parse(delivery.body)).toMatchObject({ type: 'review.resolved', data: { resolution: 'decline', reason: 'Same device as three chargebacks' } });

      // The device's next evaluation declines (blocked); the backend reads the outcome.
      const next = await evaluate({ ip: '192.0.2.44', email: 'again@example.com', device_intelligence: { device_hash: DEVICE } });
      expect(next.score.state).toBe('decline');
      const outcome = await fetch(`${server.origin}/v1/risk/evaluations/${made[0]}`, { headers: { authorization: `Bearer ${KEY_A}` } });
      expect(outcome.status).toBe(200);
      expect(((await outcome.json()) as { review: unknown }).review).toMatchObject({ status: 'resolved', resolution: 'decline', reason: 'Same device as three chargebacks' });
      const item = await server.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/review-items/${made[0]}`, headers: { authorization: `Bearer ${KEY_A}` } });
      expect(item.statusCode).toBe(401); // the API key is not an admin credential
      expect(alice.troubles).toEqual([]);
      expect(bob.troubles).toEqual([]);
    } finally {
      await alice.context.close();
      await bob.context.close();
    }
  });

  it('shows new decisions without a reload, explains the comparison, and asks why before blocking', async () => {
    const { context, page, troubles } = await openConsole(browser, server.origin);
    try {
      await logIn(page, ALICE);
      await page.clock.install();
      await page.goto(`${server.origin}/console/#/default/decisions`);
      const rows = page.locator('table.decisions tbody tr');
      await expect.poll(() => rows.count()).toBe(4);
      const arrived = await evaluate({ ip: '203.0.113.50', email: 'newcomer@example.com' });
      await server.store.log.flush();
      await page.clock.runFor(10_000);
      await expect.poll(() => rows.count()).toBe(5);
      await expect(rows.first().getByRole('link', { name: 'newcomer@example.com', exact: true }).count()).resolves.toBe(1);
      await expectNoAxeViolations(page, 'Decisions, a new one arrived');
      // The export link downloads the same search as CSV, with the page's session.
      const exportHref = await page.getByRole('link', { name: 'Export these decisions as CSV' }).getAttribute('href');
      const csv = await page.request.get(`${server.origin}${exportHref}`);
      expect(csv.headers()['content-type']).toBe('text/csv; charset=utf-8');
      const lines = (await csv.text()).trimEnd().split('\r\n');
      expect(lines[0]).toBe('id,evaluated_at,event_type,state,score,email,ip,user_id,device_hash,rules,label');
      expect(lines).toHaveLength(6);
      expect(lines[1]!.startsWith(`${arrived.id},`)).toBe(true);

      // The decision explains each comparison and the score's band.
      await page.goto(`${server.origin}/console/#/default/decisions/${arrived.id}`);
      const why = page.getByRole('region', { name: 'Why this score' });
      await why.getByText('fires at in the rule\'s ranges').waitFor();
      await why.getByText('30: review from 20 (decline from 60)').waitFor();

      // Block from the decision's page: a reason first.
      await page.getByRole('button', { name: 'Block IP address' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Block' }).click();
      await dialog.getByText('Enter a reason: whoever reads the list next needs it.').waitFor();
      await expectNoAxeViolations(page, 'Block dialog, no reason');
      await dialog.getByLabel('Reason').fill('Card testing from this address');
      await dialog.getByRole('button', { name: 'Block' }).click();
      await page.getByText('Blocked: its next evaluations decline.').waitFor();
      expect((await evaluate({ ip: '203.0.113.50', email: 'later@example.com' })).score.state).toBe('decline');
      const audit = await server.store.audit({ account: 'default', limit: 10 });
      expect(audit.some((a: { action: string }) => a.action === 'list.add')).toBe(true);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('is usable at 390 px: nothing wider than the screen but the tables, which scroll', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      await page.goto(`${server.origin}/console/`);
      await logIn(page, ALICE);
      for (const route of ['review', `review/${made[1]}`, 'entity/ip/203.0.113.7', `decisions/${made[1]}`]) {
        await page.goto(`${server.origin}/console/#/default/${route}`);
        await page.locator('main h1').waitFor();
        await expect.poll(() => page.getByText(/^Loading .*…$/).count()).toBe(0);
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth');
        // What sticks out, outside the tables' own scrolling, names the culprit when this fails.
        const wide = await page.evaluate<string>(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 391 && !e.closest('.table-scroll'))
          .slice(0, 5).map((e) => e.tagName + '.' + e.className).join(', ')`);
        expect(overflow, `${route}: ${wide}`).toBeLessThanOrEqual(390);
      }
    } finally {
      await context.close();
    }
  });
});
