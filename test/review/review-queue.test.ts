import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWebhook } from '../../src/webhooks/send.js';
import { verify, webhookHeaders } from '../../src/webhooks/signature.js';
import { createUser, expectAdminProblem, login, type Session } from '../support/admin.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * The review queue (issue 27) through the real app on both engines: evaluations answered `review`
 * open items (written with the log), listed oldest first and filtered; claimed, released and
 * resolved by analysts, a second resolution refused with 409 naming who resolved it, also when two
 * race; a decline with "block this device" labels the evaluation, adds the entry and declines the
 * device's next evaluation; the caller's backend reads the outcome with GET /v1/risk/evaluations/{id},
 * and another account reads the same 404 as for a missing id.
 */
const RULES = `
thresholds: { review: 20, decline: 40 }
rules:
  - id: test_range
    name: Address in the test range
    score: 30
    when: { field: ip.address, cidr: [203.0.113.0/24] }
  - id: other_range
    name: Address in the other test range
    score: 25
    when: { field: ip.address, cidr: [198.51.100.0/24] }
  - library: list_block
    score: 100
`;

const DEVICE = 'cd'.repeat(32);

describe.each(ENGINES)('the review queue on %s', (engine: EngineName) => {
  let t: TestApp;
  let alice: Session;
  let bob: Session;
  let betaKey: string;
  let hook: { id: string; secret: string };
  const made = {} as Record<'first' | 'approved' | 'second' | 'login' | 'race', string>;

  const evaluate = async (key: string, overrides: Record<string, unknown>) => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload: evaluationBody({ event_type: 'signup', ...overrides }) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { id: string; score: { state: string } };
  };
  const admin = (session: Session, method: 'GET' | 'POST', path: string, payload?: Record<string, unknown>) =>
    t.app.inject({ method, url: `/admin/v1/accounts/default${path}`, headers: method === 'GET' ? session.read : session.write, ...(payload === undefined ? {} : { payload }) });
  const queue = async (query = '') => {
    const response = await admin(alice, 'GET', `/review-items${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { items: Array<{ evaluation_id: string; status: string; assignee: string | null; age_seconds: number }> }).items;
  };

  beforeAll(async () => {
    const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    writeFileSync(join(rules, 'signup.yaml'), RULES);
    writeFileSync(join(rules, 'account_login.yaml'), RULES);
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine), RULES_DIR: rules });
    const owner = await createUser(t.app.store, 'owner@example.com', { owner: true });
    await t.app.store.accounts.create('beta', 'Beta', { files: [], comment: '' }, `user:${owner.id}`);
    betaKey = (await t.app.store.accounts.createKey('beta', { actor: 'test', seed: { files: [], comment: '' } })).key;
    await t.app.reloadConfiguration();
    await createUser(t.app.store, 'alice@example.com', { roles: { default: 'analyst' } });
    await createUser(t.app.store, 'bob@example.com', { roles: { default: 'analyst' } });
    const created = await t.app.store.webhookEndpoints.create('default', { url: 'http://127.0.0.1:9/hooks', events: ['review.resolved'] }, { actor: 'test' });
    hook = { id: created.endpoint.id, secret: created.secret };
    await t.app.store.webhookEndpoints.create('default', { url: 'http://127.0.0.1:9/declined', events: ['evaluation.declined'] }, { actor: 'test' });
    alice = await login(t.app, 'alice@example.com');
    bob = await login(t.app, 'bob@example.com');

    made.first = (await evaluate(KEY_A, { ip: '203.0.113.7', email: 'first@example.com', user: { user_id: 'u-1' }, device_intelligence: { device_hash: DEVICE } })).id;
    made.approved = (await evaluate(KEY_A, { ip: '192.0.2.1', email: 'fine@example.com' })).id;
    made.second = (await evaluate(KEY_A, { ip: '198.51.100.9', email: 'second@example.com' })).id;
    made.login = (await evaluate(KEY_A, { ip: '203.0.113.8', email: 'third@example.com', event_type: 'account_login' })).id;
    made.race = (await evaluate(KEY_A, { ip: '203.0.113.9', email: 'race@example.com' })).id;
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('opens an item for each evaluation answered review, with the log, listed oldest first and filtered', async () => {
    // Not flushed: the route writes what this replica still holds before it reads.
    expect((await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/review-items/${made.first}`, headers: alice.read })).statusCode).toBe(200);
    await t.app.store.log.flush();
    const items = await queue();
    expect(items.map((i) => i.evaluation_id)).toEqual([made.first, made.second, made.login, made.race]);
    expect(items[0]).toMatchObject({ status: 'open', assignee: null, email: 'first@example.com', user_id: 'u-1', event_type: 'signup', resolution: null });
    expect(items[0]!.age_seconds).toBeGreaterThanOrEqual(0);
    expect((await queue('?event_type=account_login')).map((i) => i.evaluation_id)).toEqual([made.login]);
    expect((await queue('?rule=other_range')).map((i) => i.evaluation_id)).toEqual([made.second]);
    // Pages without gaps or repeats.
    const first = (await admin(alice, 'GET', '/review-items?limit=3')).json() as { items: Array<{ evaluation_id: string }>; next_after: string };
    expect(first.items).toHaveLength(3);
    expect((await queue(`?after=${first.next_after}`)).map((i) => i.evaluation_id)).toEqual([made.race]);
    expect((await admin(alice, 'GET', '/review-items/counts')).json()).toEqual({ open: 4, claimed: 0, resolved: 0 });
    expectAdminProblem(await admin(alice, 'GET', '/review-items?status=stuck'), 400, 'invalid_request');
    // The approved evaluation has no item; this account's item is not another account's.
    expectAdminProblem(await admin(alice, 'GET', `/review-items/${made.approved}`), 404, 'resource_not_found');
    const owner = await login(t.app, 'owner@example.com');
    expectAdminProblem(await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/beta/review-items/${made.first}`, headers: owner.read }), 404, 'resource_not_found');
  });

  it('claims, refuses a colleague, releases, and resolves once: decline and block the device, all in one step', async () => {
    const claimed = await admin(alice, 'POST', `/review-items/${made.first}/claim`);
    expect(claimed.statusCode, claimed.body).toBe(200);
    const aliceActor = claimed.json().assignee as string;
    expect(aliceActor).toMatch(/^user:usr_/);
    expect((await queue(`?assignee=${encodeURIComponent(aliceActor)}`)).map((i) => i.evaluation_id)).toEqual([made.first]);
    expect((await admin(alice, 'POST', `/review-items/${made.first}/claim`)).statusCode).toBe(200); // her own claim again: no change
    const taken = await admin(bob, 'POST', `/review-items/${made.first}/claim`);
    expectAdminProblem(taken, 409, 'conflict');
    expect(taken.json().detail).toContain(`claimed by ${aliceActor}`);
    expectAdminProblem(await admin(bob, 'POST', `/review-items/${made.first}/resolve`, { resolution: 'approve', reason: 'looks fine' }), 409, 'conflict');
    expect((await admin(alice, 'GET', '/review-items/counts')).json()).toEqual({ open: 3, claimed: 1, resolved: 0 });

    const blank = await admin(alice, 'POST', `/review-items/${made.first}/resolve`, { resolution: 'decline', reason: '   ' });
    expectAdminProblem(blank, 400, 'invalid_request');
    expect(blank.json().errors).toEqual([expect.objectContaining({ path: 'reason' })]);
    const badEntry = await admin(alice, 'POST', `/review-items/${made.first}/resolve`, { resolution: 'decline', reason: 'Chargebacks', entries: [{ kind: 'ip', value: '300.1.1.1' }] });
    expectAdminProblem(badEntry, 400, 'invalid_request');
    expect(badEntry.json().errors).toEqual([expect.objectContaining({ path: 'entries.value' })]);
    // Refused as a whole: still claimed, no label.
    expect((await admin(alice, 'GET', `/review-items/${made.first}`)).json()).toMatchObject({ status: 'claimed' });
    expect(await t.app.store.labels.get('default', made.first)).toBeUndefined();

    const resolved = await admin(alice, 'POST', `/review-items/${made.first}/resolve`, { resolution: 'decline', reason: 'Same device as three chargebacks', entries: [{ kind: 'device', value: DEVICE }] });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({
      item: { status: 'resolved', resolution: 'decline', reason: 'Same device as three chargebacks', resolved_by: aliceActor },
      list_entries: [{ list: 'block', kind: 'device', value: DEVICE }],
    });
    expect(await t.app.store.labels.get('default', made.first)).toMatchObject({ label: 'fraud', author: aliceActor });
    const again = await admin(bob, 'POST', `/review-items/${made.first}/resolve`, { resolution: 'approve', reason: 'looks fine' });
    expectAdminProblem(again, 409, 'conflict');
    expect(again.json().detail).toMatch(new RegExp(`already resolved \\(decline\\) by ${aliceActor}`));
    expectAdminProblem(await admin(bob, 'POST', `/review-items/${made.first}/release`), 409, 'conflict');

    const next = await evaluate(KEY_A, { ip: '192.0.2.50', email: 'fresh@example.com', device_intelligence: { device_hash: DEVICE } });
    expect(next.score.state).toBe('decline');
    const actions = (await t.app.store.audit({ account: 'default' })).map((a) => a.action);
    expect(actions.slice(0, 3)).toEqual(['review.resolve', 'list.add', 'review.claim']);

    const released = await admin(bob, 'POST', `/review-items/${made.second}/claim`);
    expect(released.statusCode).toBe(200);
    expect((await admin(alice, 'POST', `/review-items/${made.second}/release`)).json()).toMatchObject({ status: 'open', assignee: null });
    expectAdminProblem(await admin(alice, 'POST', `/review-items/${made.second}/release`), 409, 'conflict');
  });

  it('lets exactly one of two analysts racing to resolve an open item win', async () => {
    const [a, b] = await Promise.all([
      admin(alice, 'POST', `/review-items/${made.race}/resolve`, { resolution: 'approve', reason: 'Known customer' }),
      admin(bob, 'POST', `/review-items/${made.race}/resolve`, { resolution: 'decline', reason: 'Fraud ring' }),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 409]);
    const loser = a.statusCode === 409 ? a : b;
    expect(loser.json().detail).toContain('already resolved');
    expect((await t.app.store.audit({ account: 'default' })).filter((r) => r.action === 'review.resolve' && r.target === made.race)).toHaveLength(1);
  });

  it('queued review.resolved for the endpoint that takes it, with the resolution; signed with both secrets while one is rotated, and verified by a real receiver', async () => {
    const queue = t.app.store.webhookQueue;
    // An hour ahead: the app's own worker may have tried them already (refused: 127.0.0.1:9 is private here).
    const claimed = await queue.claimDue('test', Date.now() + 3_600_000, { limit: 50 });
    const due = claimed.filter((d) => d.endpoint_id === hook.id);
    const first = due.find((d) => JSON.parse(d.payload).data.evaluation_id === made.first)!;
    expect(due.every((d) => d.type === 'review.resolved')).toBe(true);
    expect(due).toHaveLength(2); // made.first and made.race; the other endpoint does not take it
    // The other endpoint takes only evaluation.declined (the device's evaluation after the block): no review.opened for either.
    expect(claimed.filter((d) => d.endpoint_id !== hook.id).every((d) => d.type === 'evaluation.declined')).toBe(true);
    expect(claimed.every((d) => d.type !== 'review.opened')).toBe(true);
    expect(JSON.parse(first.payload)).toMatchObject({ type: 'review.resolved', data: { evaluation_id: made.first, resolution: 'decline', reason: 'Same device as three chargebacks', event_type: 'signup' } });

    const rotated = await t.app.store.webhookEndpoints.rotate('default', hook.id, { actor: 'test' });
    expect(rotated.endpoint).toMatchObject({ rotating: true });
    expect((await t.app.store.webhookEndpoints.list('default'))[0]).not.toHaveProperty('secret');
    const [endpoint] = await t.app.store.webhookEndpoints.subscribers('default', 'review.resolved', Date.now());
    expect(endpoint!.secrets).toEqual([rotated.secret, hook.secret]);

    const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (c: Buffer) => { body += c.toString(); });
      request.on('end', () => { received.push({ headers: request.headers, body }); response.writeHead(204).end(); });
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const at = Math.floor(Date.now() / 1000);
      const attempt = await sendWebhook({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, body: first.payload,
        headers: webhookHeaders(endpoint!.secrets, first.id, at, first.payload), deadlineMs: 2_000, allowPrivate: true,
      });
      expect(attempt).toMatchObject({ outcome: 'delivered', status_code: 204 });
      expect(await queue.record(first.id, 'test', attempt, Date.now())).toBe(true);
      const headers = received[0]!.headers as Record<string, string>;
      expect(headers['webhook-id']).toBe(first.id);
      for (const secret of [hook.secret, rotated.secret]) expect(verify(secret, headers, received[0]!.body, at)).toBe(true);
    } finally {
      server.close();
    }
  });

  it('tells the backend the outcome with GET /v1/risk/evaluations/{id}, and another account the 404 of a missing id', async () => {
    const read = (id: string, key = KEY_A) => t.app.inject({ method: 'GET', url: `/v1/risk/evaluations/${id}`, headers: bearer(key) });
    const declined = await read(made.first);
    expect(declined.statusCode, declined.body).toBe(200);
    expect(declined.json()).toMatchObject({ id: made.first, score: { state: 'review' }, review: { status: 'resolved', resolution: 'decline', reason: 'Same device as three chargebacks' } });
    expect(declined.json().review.resolved_at).toMatch(/Z$/);
    expect((await read(made.login)).json()).toMatchObject({ review: { status: 'open', resolution: null, resolved_at: null } });
    expect((await read(made.approved)).json()).toMatchObject({ id: made.approved, review: null });

    const other = await read(made.first, betaKey);
    const missing = await read('019a0000-0000-7000-8000-000000000000', betaKey);
    expect(other.statusCode).toBe(404);
    expect({ ...other.json(), detail: undefined, instance: undefined }).toEqual({ ...missing.json(), detail: undefined, instance: undefined });
    expect(other.json().detail).toBe((missing.json().detail as string).replace('019a0000-0000-7000-8000-000000000000', made.first));
    expect((await read('not-an-id')).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/v1/risk/evaluations/${made.first}` })).statusCode).toBe(401);
  });
});
