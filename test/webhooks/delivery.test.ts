import { mkdtempSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../src/webhooks/signature.js';
import { createUser, login, type Session } from '../support/admin.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * review.resolved end to end through the real app on both engines: an evaluation in review,
 * resolved through the admin API, queued with the resolution, sent by the app's own worker (a pass
 * run by the test rather than waited for) to a real receiver on loopback (WEBHOOK_ALLOW_PRIVATE),
 * which verifies the signature; the delivery recorded once, and not sent again.
 */
describe.each(ENGINES)('review.resolved delivered by the app on %s', (engine: EngineName) => {
  let t: TestApp;
  let analyst: Session;
  let server: Server;
  let secret: string;
  const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (c: Buffer) => { body += c.toString(); });
      request.on('end', () => { received.push({ headers: request.headers, body }); response.writeHead(204).end(); });
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    writeFileSync(join(rules, 'signup.yaml'), 'thresholds: { review: 20, decline: 40 }\nrules:\n  - id: test_range\n    name: Test range\n    score: 30\n    when: { field: ip.address, cidr: [203.0.113.0/24] }\n');
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine), RULES_DIR: rules, WEBHOOK_ALLOW_PRIVATE: 'true' });
    await createUser(t.app.store, 'analyst@example.com', { roles: { default: 'analyst' } });
    analyst = await login(t.app, 'analyst@example.com');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    await createUser(t.app.store, 'admin@example.com', { roles: { default: 'admin' } });
    const admin = await login(t.app, 'admin@example.com');
    const created = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/default/webhooks', headers: admin.write, payload: { url, events: ['review.resolved'] } });
    expect(created.statusCode, created.body).toBe(201);
    secret = created.json().secret as string;
    expect(secret).toMatch(/^whsec_/);
    const listed = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/webhooks', headers: admin.read });
    expect(listed.json().endpoints).toEqual([expect.objectContaining({ url, events: ['review.resolved'], rotating: false })]);
    expect(listed.body).not.toContain(secret);
    // Analysts work the queue; endpoints are the admins'.
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/webhooks', headers: analyst.read })).statusCode).toBe(403);
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/default/webhooks', headers: admin.write, payload: { url: 'ftp://x', events: [] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['events', 'url']);
  });
  afterAll(async () => {
    await t.app.close();
    server.close();
  });

  it('sends review.resolved, signed, once', async () => {
    const evaluation = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ event_type: 'signup', ip: '203.0.113.5' }) });
    const id = evaluation.json().id as string;
    const resolved = await t.app.inject({ method: 'POST', url: `/admin/v1/accounts/default/review-items/${id}/resolve`, headers: analyst.write, payload: { resolution: 'approve', reason: 'Known customer' } });
    expect(resolved.statusCode, resolved.body).toBe(200);
    await t.app.webhooks.tick();
    expect(received).toHaveLength(1);
    const headers = received[0]!.headers as Record<string, string>;
    expect(verify(secret, headers, received[0]!.body, Math.floor(Date.now() / 1000))).toBe(true);
    expect(JSON.parse(received[0]!.body)).toMatchObject({ type: 'review.resolved', data: { evaluation_id: id, resolution: 'approve', reason: 'Known customer' } });
    expect(await t.app.store.webhookQueue.get(headers['webhook-id']!)).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 204 });
    await t.app.webhooks.tick();
    expect(received).toHaveLength(1);
  });
});
