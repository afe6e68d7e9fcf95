import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../src/webhooks/signature.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { freePort, startServiceProcess } from '../support/process.js';
import { freshDatabaseUrl, openTestStore } from '../support/store.js';

const RULES = 'thresholds: { review: 20, decline: 40 }\nrules:\n  - id: decline_range\n    name: Decline range\n    score: 50\n    when: { field: ip.address, cidr: [198.51.100.0/24] }\n';

interface Hit { headers: Record<string, string>; body: string }

/** A real HTTP receiver on loopback; `handle` answers (default 204), every request is recorded first. */
async function receiver(handle: (request: IncomingMessage, response: ServerResponse) => void = (_q, r) => void r.writeHead(204).end(), port = 0) {
  const hits: Hit[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (c: Buffer) => { body += c.toString(); });
    request.on('end', () => { hits.push({ headers: request.headers as Record<string, string>, body }); handle(request, response); });
  }).listen(port, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { hits, url, server, close: () => { server.closeAllConnections(); server.close(); } };
}

/**
 * Webhook faults end to end through the app's own worker (PRODUCT.md "Review"), with real
 * receivers on loopback (WEBHOOK_ALLOW_PRIVATE on, except where the refusal is the point) and the
 * app's clock moved by the test rather than waited out: down then back, slow (the deadline),
 * 5xx, a redirect, a private address; on PostgreSQL, a replica killed mid-send and two replicas on
 * one database. Each attempt is read back from the delivery log.
 */
describe('webhook faults through the app (SQLite)', () => {
  let t: TestApp;
  let clock = Date.now();
  const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
  writeFileSync(join(rules, 'signup.yaml'), RULES);

  beforeAll(async () => {
    t = await startTestApp({ RULES_DIR: rules, WEBHOOK_ALLOW_PRIVATE: 'true' }, {}, { now: () => clock, webhookDeadlineMs: 300 });
  });
  afterAll(async () => {
    await t.app.close();
  });

  const endpoint = (url: string) => t.app.store.webhookEndpoints.create('default', { url, events: ['evaluation.declined'] }, { actor: 'test' });
  const test = async (endpointId: string) => t.app.store.webhookQueue.enqueueTest('default', endpointId, clock, { actor: 'test' });
  const attempts = (id: string) => t.app.store.webhookQueue.attempts('default', [id]);

  it('receiver down, then back: retried on the back-off and delivered, signed', async () => {
    const port = await freePort();
    const { endpoint: made, secret } = await endpoint(`http://127.0.0.1:${port}/hooks`);
    const answer = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ event_type: 'signup', ip: '198.51.100.7' }) });
    expect(answer.json().score.state).toBe('decline');
    await t.app.store.log.flush();
    await t.app.webhooks.tick();
    const [queued] = await t.app.store.webhookQueue.list('default', made.id);
    expect(queued).toMatchObject({ type: 'evaluation.declined', status: 'pending', next_attempt_at: clock + 10_000 });
    expect(await attempts(queued!.id)).toEqual([expect.objectContaining({ attempt: 1, status_code: null, error: 'ECONNREFUSED' })]);

    const back = await receiver(undefined, port);
    try {
      await t.app.webhooks.tick();
      expect(back.hits).toHaveLength(0); // not due yet
      clock += 10_000;
      await t.app.webhooks.tick();
      expect(back.hits).toHaveLength(1);
      expect(verify(secret, back.hits[0]!.headers, back.hits[0]!.body, Math.floor(clock / 1000))).toBe(true);
      expect(JSON.parse(back.hits[0]!.body)).toMatchObject({ type: 'evaluation.declined', data: { evaluation_id: answer.json().id } });
      expect(await t.app.store.webhookQueue.get(queued!.id)).toMatchObject({ status: 'delivered', attempts: 2 });
      expect((await attempts(queued!.id)).map((a) => [a.status_code, a.error])).toEqual([[null, 'ECONNREFUSED'], [204, null]]);
    } finally {
      back.close();
    }
  });

  it('a slow receiver is cut at the deadline and retried', async () => {
    const slow = await receiver(() => undefined); // never answers
    try {
      const { endpoint: made } = await endpoint(slow.url);
      const id = await test(made.id);
      await t.app.webhooks.tick();
      expect(slow.hits).toHaveLength(1);
      const [attempt] = await attempts(id);
      expect(attempt).toMatchObject({ status_code: null, error: 'deadline (300 ms)' });
      expect(attempt!.duration_ms).toBeGreaterThanOrEqual(250);
      expect(await t.app.store.webhookQueue.get(id)).toMatchObject({ status: 'pending' });
    } finally {
      slow.close();
    }
  });

  it('a 5xx is a failed attempt, its answer kept, retried', async () => {
    const failing = await receiver((_q, r) => void r.writeHead(503).end('over capacity'));
    try {
      const { endpoint: made } = await endpoint(failing.url);
      const id = await test(made.id);
      await t.app.webhooks.tick();
      expect(await attempts(id)).toEqual([expect.objectContaining({ status_code: 503, error: 'status 503', response: 'over capacity' })]);
      expect(await t.app.store.webhookQueue.get(id)).toMatchObject({ status: 'pending', next_attempt_at: clock + 10_000 });
    } finally {
      failing.close();
    }
  });

  it('a redirect is not followed', async () => {
    const target = await receiver();
    const redirecting = await receiver((_q, r) => void r.writeHead(302, { location: target.url }).end());
    try {
      const { endpoint: made } = await endpoint(redirecting.url);
      const id = await test(made.id);
      await t.app.webhooks.tick();
      expect(redirecting.hits).toHaveLength(1);
      expect(target.hits).toHaveLength(0);
      expect(await attempts(id)).toEqual([expect.objectContaining({ status_code: 302, error: 'redirect not followed (302)' })]);
    } finally {
      redirecting.close();
      target.close();
    }
  });

  it('a private address is refused when WEBHOOK_ALLOW_PRIVATE is off (the default)', async () => {
    const strict = await startTestApp({}, {}, { now: () => clock });
    const inside = await receiver();
    try {
      const { endpoint: made } = await strict.app.store.webhookEndpoints.create('default', { url: inside.url, events: ['review.resolved'] }, { actor: 'test' });
      const id = await strict.app.store.webhookQueue.enqueueTest('default', made.id, clock, { actor: 'test' });
      await strict.app.webhooks.tick();
      expect(inside.hits).toHaveLength(0);
      expect(await strict.app.store.webhookQueue.attempts('default', [id])).toEqual([expect.objectContaining({ status_code: null, error: 'private address refused (127.0.0.1)' })]);
    } finally {
      inside.close();
      await strict.app.close();
    }
  });
});

describe('webhook replicas on one PostgreSQL database', { timeout: 120_000 }, () => {
  it('a replica killed mid-send: the delivery is sent once more, by another, after the lease, and not again', async () => {
    const url = await freshDatabaseUrl('postgres');
    const setup = await openTestStore({ url }, { writeLog: false });
    let replica: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
    let held: ServerResponse | undefined;
    const hook = await receiver((_q, response) => {
      if (held === undefined && replica !== undefined) {
        // The first request: the replica dies while it waits for the answer.
        held = response;
        replica.child.kill('SIGKILL');
      } else response.writeHead(204).end();
    });
    try {
      // The replica makes the API key's account (`default`), then takes what is queued within a second.
      replica = await startServiceProcess({ DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', API_KEYS: KEY_A });
      const { endpoint: made, secret } = await setup.webhookEndpoints.create('default', { url: hook.url, events: ['review.resolved'] }, { actor: 'test' });
      const id = await setup.webhookQueue.enqueueTest('default', made.id, Date.now(), { actor: 'test' });
      await replica.exited; // killed by the receiver on the first request
      expect(hook.hits).toHaveLength(1);
      held?.destroy();
      expect(await setup.webhookQueue.get(id)).toMatchObject({ status: 'pending', attempts: 0 });

      // Another replica, its clock past the dead one's 60 s lease.
      let clock = Date.now();
      const other = await startTestApp({ DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true' }, {}, { now: () => clock });
      try {
        await other.app.webhooks.tick();
        expect(hook.hits).toHaveLength(1); // the lease still holds
        clock += 61_000;
        await other.app.webhooks.tick();
        expect(hook.hits).toHaveLength(2);
        expect(hook.hits[1]!.headers['webhook-id']).toBe(id); // the same delivery: the receiver deduplicates
        expect(verify(secret, hook.hits[1]!.headers, hook.hits[1]!.body, Math.floor(clock / 1000))).toBe(true);
        expect(await setup.webhookQueue.get(id)).toMatchObject({ status: 'delivered', attempts: 1 });
        clock += 3_600_000;
        await other.app.webhooks.tick();
        expect(hook.hits).toHaveLength(2);
      } finally {
        await other.app.close();
      }
    } finally {
      if (replica && replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
      hook.close();
      await setup.close();
    }
  });

  it('two apps on one database: each delivery sent by one of them, once', async () => {
    const url = await freshDatabaseUrl('postgres');
    const a = await startTestApp({ DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true' });
    const b = await startTestApp({ DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true' });
    const hook = await receiver();
    try {
      const { endpoint: made } = await a.app.store.webhookEndpoints.create('default', { url: hook.url, events: ['review.resolved'] }, { actor: 'test' });
      const ids = new Set<string>();
      for (let i = 0; i < 40; i++) ids.add(await a.app.store.webhookQueue.enqueueTest('default', made.id, Date.now(), { actor: 'test' }));
      for (let pass = 0; pass < 10 && hook.hits.length < ids.size; pass++) await Promise.all([a.app.webhooks.tick(), b.app.webhooks.tick()]);
      const sent = hook.hits.map((h) => h.headers['webhook-id']!);
      expect(sent.sort()).toEqual([...ids].sort());
      const deliveries = await a.app.store.webhookQueue.list('default', made.id, { limit: 100 });
      expect(deliveries.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
    } finally {
      hook.close();
      await a.app.close();
      await b.app.close();
    }
  });
});
