import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../src/webhooks/signature.js';
import { createUser, login, type Session } from '../support/admin.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

const RULES = 'thresholds: { review: 20, decline: 40 }\nrules:\n  - id: review_range\n    name: Review range\n    score: 30\n    when: { field: ip.address, cidr: [203.0.113.0/24] }\n' +
  '  - id: decline_range\n    name: Decline range\n    score: 50\n    when: { field: ip.address, cidr: [198.51.100.0/24] }\n';
const KEY = 'a webhook secret key of at least 32 characters, for tests';

interface Received { headers: Record<string, string>; body: string }

/** A real receiver on loopback answering `status` (settable), recording what it got. */
async function receiver() {
  const received: Received[] = [];
  let status = 204;
  const server: Server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (c: Buffer) => { body += c.toString(); });
    request.on('end', () => { received.push({ headers: request.headers as Record<string, string>, body }); response.writeHead(status).end(status >= 300 ? 'not now' : ''); });
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { received, server, url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, answer: (s: number) => { status = s; } };
}

/**
 * The admin API of webhook endpoints beyond create and rotate, through the real app on both
 * engines: edit (URL, events, on/off) and delete, the delivery log (one row per attempt: status
 * code, duration, error), send again, a test delivery sent at once, review.opened and
 * evaluation.declined queued by the log writer only for endpoints that are on and take them, and
 * the signing secret sealed at rest under WEBHOOK_SECRET_KEY.
 */
describe.each(ENGINES)('webhook endpoints through the admin API on %s', (engine: EngineName) => {
  let t: TestApp;
  let admin: Session;
  let r: Awaited<ReturnType<typeof receiver>>;
  let database: string;
  const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
    t.app.inject({ method, url: `/admin/v1/accounts/default/webhooks${path}`, headers: method === 'GET' ? admin.read : admin.write, ...(payload && { payload }) });

  beforeAll(async () => {
    r = await receiver();
    const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    writeFileSync(join(rules, 'signup.yaml'), RULES);
    database = await freshDatabaseUrl(engine);
    t = await startTestApp({ DATABASE_URL: database, RULES_DIR: rules, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_SECRET_KEY: KEY });
    await createUser(t.app.store, 'admin@example.com', { roles: { default: 'admin' } });
    admin = await login(t.app, 'admin@example.com');
  });
  afterAll(async () => {
    await t.app.close();
    r.server.close();
  });

  it('edits and deletes endpoints, refusing bad changes by field', async () => {
    const created = (await api('POST', '', { url: r.url('/a'), events: ['review.resolved'] })).json();
    const id = created.endpoint.id as string;
    expect(created.endpoint).toMatchObject({ enabled: true });
    const edited = await api('PATCH', `/${id}`, { url: r.url('/b'), events: ['review.opened', 'evaluation.declined'], enabled: false });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({ id, url: r.url('/b'), events: ['review.opened', 'evaluation.declined'], enabled: false });
    const bad = await api('PATCH', `/${id}`, { url: 'ftp://x', events: [] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['events', 'url']);
    expect((await api('PATCH', `/${id}`, {})).statusCode).toBe(400);
    expect((await api('PATCH', '/whe_0000000000000000', { enabled: true })).statusCode).toBe(404);
    expect((await api('DELETE', `/${id}`)).statusCode).toBe(204);
    expect((await api('DELETE', `/${id}`)).statusCode).toBe(404);
    expect((await api('GET', '')).json().endpoints.map((e: { id: string }) => e.id)).not.toContain(id);
    const audit = (await t.app.store.audit({ account: 'default' })).filter((a) => a.target === id).map((a) => a.action);
    expect(audit).toEqual(expect.arrayContaining(['webhook.create', 'webhook.update', 'webhook.delete']));
    expect(JSON.stringify(await t.app.store.audit({ account: 'default' }))).not.toContain(created.secret);
  });

  it('seals the signing secret at rest, and signs with it', async () => {
    const created = (await api('POST', '', { url: r.url('/sealed'), events: ['review.resolved'] })).json();
    const row = await t.app.store.engine.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', created.endpoint.id).executeTakeFirstOrThrow();
    expect(row.secret).toMatch(/^sealed:v1:/);
    expect(row.secret).not.toContain(created.secret.slice(6, 20));
    const tested = await api('POST', `/${created.endpoint.id}/test`);
    expect(tested.json()).toMatchObject({ type: 'webhook.test', status: 'delivered' });
    const got = r.received.at(-1)!;
    expect(verify(created.secret, got.headers, got.body, Math.floor(Date.now() / 1000))).toBe(true);
    await api('DELETE', `/${created.endpoint.id}`);
  });

  it('queues review.opened and evaluation.declined from the log writer, only for endpoints that are on and take them', async () => {
    const opened = (await api('POST', '', { url: r.url('/opened'), events: ['review.opened'] })).json().endpoint.id as string;
    const declined = (await api('POST', '', { url: r.url('/declined'), events: ['evaluation.declined'] })).json().endpoint.id as string;
    const off = (await api('POST', '', { url: r.url('/off'), events: ['review.opened', 'evaluation.declined'], enabled: false })).json().endpoint.id as string;
    const evaluate = async (ip: string) => (await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ event_type: 'signup', ip }) })).json();
    const review = await evaluate('203.0.113.5');
    const decline = await evaluate('198.51.100.5');
    await evaluate('192.0.2.1');
    expect([review.score.state, decline.score.state]).toEqual(['review', 'decline']);
    await t.app.store.log.flush();
    const log = async (endpoint: string) => (await api('GET', `/${endpoint}/deliveries`)).json().deliveries as Array<{ type: string; payload: { data: { evaluation_id: string } } }>;
    expect((await log(opened)).map((d) => [d.type, d.payload.data.evaluation_id])).toEqual([['review.opened', review.id]]);
    expect((await log(declined)).map((d) => [d.type, d.payload.data.evaluation_id])).toEqual([['evaluation.declined', decline.id]]);
    expect(await log(off)).toEqual([]);
    await t.app.webhooks.tick();
    const sent = r.received.filter((x) => x.body.includes(review.id) || x.body.includes(decline.id)).map((x) => JSON.parse(x.body).type).sort();
    expect(sent).toEqual(['evaluation.declined', 'review.opened']);
    for (const id of [opened, declined, off]) await api('DELETE', `/${id}`);
  });

  it('keeps every attempt in the delivery log, sends again as a new delivery, and tests an endpoint at once', async () => {
    const created = (await api('POST', '', { url: r.url('/log'), events: ['evaluation.declined'] })).json();
    const id = created.endpoint.id as string;
    r.answer(503);
    const failed = await api('POST', `/${id}/test`);
    expect(failed.statusCode, failed.body).toBe(200);
    expect(failed.json()).toMatchObject({ type: 'webhook.test', status: 'pending', last_status_code: 503, last_error: 'status 503' });
    expect(failed.json().attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 503, error: 'status 503', response: 'not now' })]);
    expect(failed.json().attempts[0].duration_ms).toBeGreaterThanOrEqual(0);
    r.answer(204);
    const again = await api('POST', `/${id}/deliveries/${failed.json().id}/resend`);
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json()).toMatchObject({ status: 'pending', resent_from: failed.json().id, type: 'webhook.test', attempts: [] });
    expect(again.json().id).not.toBe(failed.json().id);
    await t.app.webhooks.tick();
    const deliveries = (await api('GET', `/${id}/deliveries`)).json().deliveries as Array<{ id: string; status: string; attempts: Array<{ status_code: number }> }>;
    expect(deliveries.map((d) => d.id)).toEqual([again.json().id, failed.json().id]);
    expect(deliveries[0]).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ status_code: 204 })] });
    const page = (await api('GET', `/${id}/deliveries?limit=1`)).json();
    expect(page.deliveries).toHaveLength(1);
    expect((await api('GET', `/${id}/deliveries?before=${page.next_before}`)).json().deliveries.map((d: { id: string }) => d.id)).toEqual([failed.json().id]);
    expect((await api('GET', `/${id}/deliveries?before=nope`)).json().errors[0].path).toBe('before');
    expect((await api('POST', `/${id}/deliveries/msg_00000000000000000000000000000000/resend`)).statusCode).toBe(404);

    // Switched off: its pending deliveries fail now (the 503'd test was pending its retry).
    await api('PATCH', `/${id}`, { enabled: false });
    expect((await api('GET', `/${id}/deliveries`)).json().deliveries[1]).toMatchObject({ status: 'failed', last_error: 'endpoint switched off' });
  });

  it('fails a delivery, never unsigned, when the sealed secret does not open (WEBHOOK_SECRET_KEY changed)', async () => {
    const created = (await api('POST', '', { url: r.url('/rekeyed'), events: ['review.resolved'] })).json();
    const other = await startTestApp({ DATABASE_URL: database, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_SECRET_KEY: `${KEY} but another` });
    try {
      const before = r.received.length;
      const id = await other.app.store.webhookQueue.enqueueTest('default', created.endpoint.id, Date.now(), { actor: 'test' });
      const attempt = await other.app.webhooks.sendNow(id);
      expect(attempt).toMatchObject({ outcome: 'failed', error: expect.stringContaining('WEBHOOK_SECRET_KEY') });
      expect(r.received.length).toBe(before);
    } finally {
      await other.app.close();
    }
  });
});
