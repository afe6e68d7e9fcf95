import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from './support/dns-server.js';
import { KEY_A, evaluationBody } from './support/app.js';

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

let dns: TestDnsServer | undefined;
afterEach(async () => {
  await dns?.close();
  dns = undefined;
});

describe('graceful shutdown of the real process', () => {
  it('answers in-flight requests after SIGTERM, then exits 0', async () => {
    // The DNS answer is held back so the evaluation is still in flight when the signal arrives.
    dns = await startDnsServer({ zone: { 'slow.example': { MX: [{ exchange: 'mx.slow.example', priority: 10 }] } }, faults: { 'slow.example': { kind: 'delay', ms: 1500 } } });
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        PATH: process.env.PATH, NODE_ENV: 'test', PORT: String(port), HOST: '127.0.0.1', API_KEYS: KEY_A,
        DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '5000', SHUTDOWN_GRACE_MS: '10000', LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const exited = once(child, 'exit');
    await expect.poll(() => output.includes('"msg":"ready"'), { timeout: 15_000, interval: 50 }).toBe(true);

    const inFlight = fetch(`http://127.0.0.1:${port}/v1/risk/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify(evaluationBody({ email: 'jane@slow.example' })),
    });
    await dns.waitForQueries(1);
    child.kill('SIGTERM');

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { email: { deliverability: string } }).email.deliverability).toBe('deliverable');
    const [code] = await exited;
    if (code !== 0) console.log(output);
    expect(code).toBe(0);
    expect(output).toContain('shutting down');
    expect(output).toContain('"msg":"stopped"');
  });
});
