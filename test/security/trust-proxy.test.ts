import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { bearer, KEY_A, startTestApp, type TestApp } from '../support/app.js';

/**
 * X-Forwarded-For is believed only from the load balancers named in TRUST_PROXY. The client
 * address the app settles on is the `ip` of the one request log line.
 */
let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

async function loggedIp(app: TestApp, options: { remoteAddress?: string; forwardedFor?: string }): Promise<unknown> {
  const before = app.logs.lines.length;
  const response = await app.app.inject({
    method: 'GET',
    url: '/openapi.json',
    remoteAddress: options.remoteAddress,
    headers: options.forwardedFor === undefined ? {} : { 'x-forwarded-for': options.forwardedFor },
  });
  expect(response.statusCode).toBe(200);
  const lines = app.logs.lines.slice(before).filter((l) => l.url === '/openapi.json');
  expect(lines).toHaveLength(1);
  return lines[0]!.ip;
}

describe('TRUST_PROXY=127.0.0.1/32', () => {
  it('ignores X-Forwarded-For from an untrusted source', async () => {
    t = await startTestApp({ TRUST_PROXY: '127.0.0.1/32' });
    expect(await loggedIp(t, { remoteAddress: '203.0.113.9', forwardedFor: '198.51.100.7' })).toBe('203.0.113.9');
    expect(await loggedIp(t, { remoteAddress: '127.0.0.2', forwardedFor: '198.51.100.7' })).toBe('127.0.0.2');
    expect(await loggedIp(t, { remoteAddress: '::1', forwardedFor: '198.51.100.7' })).toBe('::1');
  });

  it('uses X-Forwarded-For from the trusted proxy, IPv4-mapped spelling included', async () => {
    t = await startTestApp({ TRUST_PROXY: '127.0.0.1/32' });
    expect(await loggedIp(t, { remoteAddress: '127.0.0.1', forwardedFor: '198.51.100.7' })).toBe('198.51.100.7');
    expect(await loggedIp(t, { remoteAddress: '::ffff:127.0.0.1', forwardedFor: '198.51.100.7' })).toBe('198.51.100.7');
  });

  it('takes the nearest untrusted hop, so a client cannot forge the leftmost entry', async () => {
    t = await startTestApp({ TRUST_PROXY: '127.0.0.1/32' });
    // The client sent "X-Forwarded-For: 10.0.0.1"; the proxy appended what it saw, 198.51.100.7.
    expect(await loggedIp(t, { remoteAddress: '127.0.0.1', forwardedFor: '10.0.0.1, 198.51.100.7' })).toBe('198.51.100.7');
    // A chain through the trusted proxy twice still ends at the first address it does not trust.
    expect(await loggedIp(t, { remoteAddress: '127.0.0.1', forwardedFor: '10.0.0.1, 198.51.100.7, 127.0.0.1' })).toBe('198.51.100.7');
  });

  it('without TRUST_PROXY, X-Forwarded-For is never used', async () => {
    t = await startTestApp();
    expect(await loggedIp(t, { remoteAddress: '127.0.0.1', forwardedFor: '198.51.100.7' })).toBe('127.0.0.1');
  });

  it('over a real connection from 127.0.0.1: trusted when configured, not otherwise', async () => {
    for (const [trust, expected] of [['127.0.0.1/32', '198.51.100.7'], ['10.0.0.0/8', '127.0.0.1']] as const) {
      t = await startTestApp({ TRUST_PROXY: trust });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = t.app.server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/v1/risk/evaluate`, {
        method: 'POST',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' },
        body: JSON.stringify({ ip: '81.2.69.160', email: 'a@example.com', event_type: 'account_register' }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      await t.app.close();
      expect(t.logs.lines.find((l) => l.msg === 'evaluation')?.ip).toBe(expected);
      t = undefined;
    }
  });
});

describe('TRUST_PROXY at config time', () => {
  it.each([['true'], ['TRUE'], ['1'], ['*'], ['loopback'], ['lb.internal'], ['10.0.0.0/33'], ['10.0.0.0/8/8'], ['::1/129']])(
    'refuses %s, naming the variable',
    (value) => {
      let error: unknown;
      try {
        loadConfig({ TRUST_PROXY: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n')).toMatch(/^TRUST_PROXY: /m);
    },
  );

  it('accepts a list of addresses and CIDRs of both families', () => {
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1/32, 10.0.0.0/8,::1,fd00::/8' }).trustProxy).toEqual(['127.0.0.1/32', '10.0.0.0/8', '::1', 'fd00::/8']);
  });

  it('refuses TRUST_PROXY=true when the app is built, before anything listens', async () => {
    await expect(startTestApp({ TRUST_PROXY: 'true' })).rejects.toThrow(/TRUST_PROXY/);
  });
});
