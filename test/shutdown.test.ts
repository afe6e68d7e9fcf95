import { afterEach, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from './support/dns-server.js';
import { KEY_A, evaluationBody } from './support/app.js';
import { startServiceProcess } from './support/process.js';

let dns: TestDnsServer | undefined;
afterEach(async () => {
  await dns?.close();
  dns = undefined;
});

describe('graceful shutdown of the real process', () => {
  it('answers an in-flight request after SIGTERM, then exits 0', async () => {
    // The DNS answer is held back so the evaluation is still in flight when the signal arrives.
    dns = await startDnsServer({
      zone: { 'slow.example': { MX: [{ exchange: 'mx.slow.example', priority: 10 }] } },
      faults: { 'slow.example': { kind: 'delay', ms: 1500 } },
    });
    const service = await startServiceProcess({
      API_KEYS: KEY_A, DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '5000', SHUTDOWN_GRACE_MS: '10000',
    });

    const inFlight = fetch(`${service.url}/v1/risk/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify(evaluationBody({ email: 'jane@slow.example' })),
    });
    await dns.waitForQueries(1);
    const code = service.stop();

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(response.headers.get('connection')).toBe('close');
    expect(((await response.json()) as { email: { deliverability: string } }).email.deliverability).toBe('deliverable');
    expect(await code).toBe(0);
    expect(service.output()).toContain('shutting down');
    expect(service.output()).toContain('"msg":"stopped"');
  });
});
