import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendWebhook } from '../../src/webhooks/send.js';
import { generateSecret } from '../../src/store/webhook-endpoints.js';
import { verify, webhookHeaders } from '../../src/webhooks/signature.js';

/**
 * One webhook attempt against real HTTP receivers on loopback (the tests allow private
 * destinations, as WEBHOOK_ALLOW_PRIVATE would, except where refusing them is the point): signed
 * after Standard Webhooks and verified by the examples in examples/ (Node and Python, as a reader
 * runs them), a 5xx, a redirect not followed, a receiver too slow for the deadline, one down then
 * back, and private destinations refused, by literal address and by a name that resolves to one.
 */
const hasPython = spawnSync('python3', ['--version']).status === 0;

interface Received { headers: IncomingMessage['headers']; body: string }

const servers: Server[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

async function receiver(answer: (request: IncomingMessage, response: ServerResponse) => void, port = 0): Promise<{ url: string; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(request, response);
    });
  });
  servers.push(server);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${bound}/hooks`, port: bound, received };
}

const event = { type: 'review.resolved', timestamp: '2026-11-26T21:00:00.000Z', data: { evaluation_id: '019a4f6e-8c1b-7d2e-9f3a-1b2c3d4e5f60', resolution: 'decline' } };
const body = JSON.stringify(event);
const signed = (secrets: string[], id = 'msg_1', at = Math.floor(Date.now() / 1000)) => webhookHeaders(secrets, id, at, body);
const attempt = (url: string, headers: Record<string, string>, options: { allowPrivate?: boolean; deadlineMs?: number } = {}) =>
  sendWebhook({ url, body, headers, deadlineMs: options.deadlineMs ?? 2_000, allowPrivate: options.allowPrivate ?? true });

describe('a webhook attempt', () => {
  it('is delivered signed: each secret valid while one is rotated, none other', async () => {
    const r = await receiver((_, res) => res.writeHead(204).end());
    const [current, next] = [generateSecret(), generateSecret()];
    const result = await attempt(r.url, signed([current, next], 'msg_rot'));
    expect(result).toMatchObject({ outcome: 'delivered', status_code: 204, error: null });
    const [got] = r.received;
    expect(got!.body).toBe(body);
    expect(got!.headers['content-type']).toBe('application/json');
    const headers = got!.headers as Record<string, string>;
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    const now = Math.floor(Date.now() / 1000);
    expect(verify(current, headers, got!.body, now)).toBe(true);
    expect(verify(next, headers, got!.body, now)).toBe(true);
    expect(verify(generateSecret(), headers, got!.body, now)).toBe(false);
    expect(verify(current, headers, got!.body.replace('decline', 'approve'), now)).toBe(false);
    expect(verify(current, headers, got!.body, now + 600)).toBe(false); // a replay ten minutes later
  });

  it('fails on a 5xx, keeping the status and the start of the answer for the delivery log', async () => {
    const r = await receiver((_, res) => res.writeHead(503).end('x'.repeat(10_000)));
    const result = await attempt(r.url, signed([generateSecret()]));
    expect(result).toMatchObject({ outcome: 'failed', status_code: 503, error: 'status 503' });
    expect(result.response).toHaveLength(4_096);
  });

  it('does not follow a redirect', async () => {
    const target = await receiver((_, res) => res.writeHead(204).end());
    const r = await receiver((_, res) => res.writeHead(302, { location: target.url }).end());
    expect(await attempt(r.url, signed([generateSecret()]))).toMatchObject({ outcome: 'failed', status_code: 302, error: 'redirect not followed (302)' });
    expect(target.received).toHaveLength(0);
  });

  it('gives up at its deadline on a receiver that does not answer', async () => {
    const r = await receiver(() => undefined); // holds the request open
    const result = await attempt(r.url, signed([generateSecret()]), { deadlineMs: 150 });
    expect(result).toMatchObject({ outcome: 'failed', status_code: null, error: 'deadline (150 ms)' });
    expect(result.duration_ms).toBeGreaterThanOrEqual(140);
    expect(result.duration_ms).toBeLessThan(1_500);
  });

  it('fails while the receiver is down and is delivered once it is back on the same port', async () => {
    const first = await receiver((_, res) => res.writeHead(204).end());
    const port = first.port;
    await new Promise((r) => servers.pop()!.close(r));
    expect(await attempt(first.url, signed([generateSecret()]))).toMatchObject({ outcome: 'failed', status_code: null, error: 'ECONNREFUSED' });
    const back = await receiver((_, res) => res.writeHead(200).end('ok'), port);
    expect(await attempt(back.url, signed([generateSecret()]))).toMatchObject({ outcome: 'delivered', status_code: 200, response: 'ok' });
  });

  it('refuses private destinations unless allowed: a literal address, and a name that resolves to one', async () => {
    const r = await receiver((_, res) => res.writeHead(204).end());
    const refused = { allowPrivate: false };
    expect(await attempt(r.url, signed([generateSecret()]), refused)).toMatchObject({ outcome: 'failed', error: 'private address refused (127.0.0.1)' });
    expect(await attempt('http://10.0.0.1/hooks', signed([generateSecret()]), refused)).toMatchObject({ outcome: 'failed', error: 'private address refused (10.0.0.1)' });
    expect(await attempt('http://[::1]/hooks', signed([generateSecret()]), refused)).toMatchObject({ outcome: 'failed', error: 'private address refused (::1)' });
    // A name is checked on the address the socket would connect to (here the test's own look-up, not the system's resolver).
    const loopbackName = (_host: string, _options: object, callback: (e: Error | null, a: Array<{ address: string; family: number }>) => void) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const named = await sendWebhook({ url: `http://receiver.test:${r.port}/hooks`, body, headers: signed([generateSecret()]), deadlineMs: 2_000, allowPrivate: false, lookup: loopbackName as never });
    expect(named).toMatchObject({ outcome: 'failed', error: 'private address refused (127.0.0.1)' });
    expect(r.received).toHaveLength(0);
    expect(await attempt('ftp://example.com/x', {}, refused)).toMatchObject({ outcome: 'failed', error: 'scheme ftp: refused' });
  });
});

describe.each([
  { name: 'Node', command: process.execPath, script: 'examples/node/webhook-receiver.mjs', present: true },
  { name: 'Python', command: 'python3', script: 'examples/python/webhook_receiver.py', present: hasPython },
])('the $name receiver example', ({ command, script, present }) => {
  it.skipIf(!present)('accepts what the service signs with its secret, and refuses another secret', async () => {
    const free = await receiver(() => undefined);
    const port = free.port;
    await new Promise((r) => servers.pop()!.close(r));
    const secret = generateSecret();
    const child = spawn(command, [script], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the example did not start')), 10_000);
      child.stdout!.on('data', () => { if (output.includes('listening')) { clearTimeout(timer); resolve(); } });
    });
    const url = `http://127.0.0.1:${port}/hooks`;
    expect(await attempt(url, signed([generateSecret(), secret], 'msg_example'))).toMatchObject({ outcome: 'delivered', status_code: 204 });
    expect(await attempt(url, signed([generateSecret()], 'msg_wrong'))).toMatchObject({ outcome: 'failed', status_code: 400 });
    expect(await attempt(url, signed([secret], 'msg_old', Math.floor(Date.now() / 1000) - 3_600))).toMatchObject({ outcome: 'failed', status_code: 400 });
    // The example prints its line as it answers: waited for as output, not slept out.
    if (!output.includes('msg_example')) await new Promise<void>((resolve) => child.stdout!.on('data', () => { if (output.includes('msg_example')) resolve(); }));
    expect(output).toContain('verified review.resolved msg_example');
    expect(output).not.toContain('msg_wrong');
  });
});
