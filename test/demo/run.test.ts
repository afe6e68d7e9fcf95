import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { launchChromium, recordRequests } from '../support/browser.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { freePort } from '../support/process.js';

/**
 * `npm run demo` as a user runs it: demo/run.ts itself, a child process with the environment of a
 * fresh clone (no keys, no DNS_SERVERS unless given), then a sign-up through Chromium. Only the DNS
 * server is the test's, on loopback: the system's resolver is never sent a query.
 */

// A start compiles TypeScript on the fly, and a browser page starts a renderer: seconds on a
// loaded 2-core runner. The harness's time per test, not a bound on the demo.
vi.setConfig({ testTimeout: 90_000 });

interface Demo {
  child: ChildProcess;
  output: () => string;
  serviceUrl: string;
  demoUrl: string;
}

const running: ChildProcess[] = [];
let browser: Browser;
let dns: TestDnsServer;

async function runDemo(env: Record<string, string>): Promise<Demo> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'demo/run.ts'], {
    env: {
      PATH: process.env.PATH,
      DEMO_PORT: String(port),
      // Its own store and data folder, as a fresh clone has (not this checkout's ./var).
      DATA_DIR: mkdtempSync(join(tmpdir(), 'risk-demo-data-')),
      DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'risk-demo-store-')), 'risk.sqlite')}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const died = once(child, 'exit').then(([code]) => {
    throw new Error(`npm run demo exited (${code}):\n${output}`);
  });
  died.catch(() => undefined);
  await Promise.race([expect.poll(() => /sign-up demo: \S+/.test(output), { timeout: 60_000, interval: 100 }).toBe(true), died]);
  return {
    child,
    output: () => output,
    serviceUrl: /risk service: (\S+)/.exec(output)![1]!,
    demoUrl: /sign-up demo: (\S+?)\/?\s/.exec(output)![1]!,
  };
}

beforeAll(async () => {
  dns = await startDnsServer({ zone: { 'example.org': { MX: [{ exchange: 'mx.example.org', priority: 10 }] }, 'mx.example.org': { A: ['192.0.2.1'] } } });
  browser = await launchChromium();
});

afterAll(async () => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  await browser?.close();
  await dns?.close();
});

describe('npm run demo', () => {
  it('starts with no DNS_SERVERS (the system resolvers, as the server), and stops on Ctrl-C', async () => {
    const demo = await runDemo({});
    expect(demo.output()).not.toContain('no DNS servers given');
    const exited = once(demo.child, 'exit');
    demo.child.kill('SIGINT');
    expect((await exited)[0]).toBe(0);
  });

  it('signs a user up in Chromium: the page, the SDK from its service, the decision with its reasons', async () => {
    const demo = await runDemo({ DNS_SERVERS: `${dns.host}:${dns.port}` });
    const context = await browser.newContext();
    try {
      const requests = await recordRequests(context);
      const page = await context.newPage();
      await page.goto(`${demo.demoUrl}/`);
      await page.fill('#first_name', 'Jo');
      await page.fill('#email', 'jo@example.org');
      await Promise.all([page.waitForURL('**/signup'), page.click('button[type=submit]')]);

      expect(await page.locator('[data-state]').getAttribute('data-state')).toBe('approve');
      const sent = JSON.parse((await page.locator('#sent').textContent()) ?? '');
      expect(sent).toMatchObject({ ip: '127.0.0.1', email: 'jo@example.org', event_type: 'account_register' });
      expect(sent.device_intelligence).toMatchObject({ device_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      // The e-mail's domain was looked up on the test's DNS server, nowhere else.
      expect(dns.queries.map((q) => q.name)).toContain('example.org');
      expect(requests.filter((url) => url.startsWith(demo.serviceUrl))).toEqual([expect.stringMatching(/\/sdk\/v[^/]+\/device\.js$/)]);
    } finally {
      await context.close();
      demo.child.kill('SIGINT');
    }
  });
});
