import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluationBody, KEY_A } from '../support/app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startLoad, type Answer } from '../support/load.js';
import { startServiceProcess, type ServiceProcess } from '../support/process.js';

/**
 * SIGTERM reaches the real process while requests are in flight: a wave held at the DNS step (so
 * it is certainly inside the service) and a steady load on keep-alive connections. Every request
 * the service received gets its answer, the process exits 0 within SHUTDOWN_GRACE_MS.
 */

const GRACE_MS = 8_000;
const HELD_MS = 1_500;
const HELD = 24;
const WORKERS = 6;

let dns: TestDnsServer | undefined;
let service: ServiceProcess | undefined;
afterEach(async () => {
  await service?.stop();
  await dns?.close();
  service = undefined;
  dns = undefined;
});

async function evaluate(url: string, domain: string): Promise<Answer> {
  const sentAt = performance.now();
  const response = await fetch(`${url}/v1/risk/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    body: JSON.stringify(evaluationBody({ email: `jane@${domain}` })),
  });
  const body: unknown = await response.json();
  return { status: response.status, body, ms: performance.now() - sentAt, sentAt, connection: response.headers.get('connection') };
}

describe('graceful shutdown under load', () => {
  it('answers every request in flight at SIGTERM and exits 0 within the grace period', async () => {
    const mx = { MX: [{ exchange: 'mx.mail.example', priority: 10 }] };
    dns = await startDnsServer({ zone: { 'fast.example': mx } });
    const held = Array.from({ length: HELD }, (_, i) => `u${i}.held.example`);
    for (const name of held) {
      dns.setZone(name, mx);
      dns.setFault(name, { kind: 'delay', ms: HELD_MS });
    }
    service = await startServiceProcess({
      API_KEYS: KEY_A,
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      DNS_TIMEOUT_MS: '5000',
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
    });
    const { url, child } = service;
    let exitedAt: number | null = null;
    const exited = once(child, 'exit').then(([code]) => {
      exitedAt = performance.now();
      return code as number | null;
    });

    // The steady load: fast answers on keep-alive connections, before and after the signal.
    let signalledAt: number | null = null;
    const afterSignal: string[] = [];
    const steady = startLoad({
      url,
      workers: WORKERS,
      // Once the listener is closed a new connection is refused at once: stop then, not spin.
      until: () => exitedAt !== null || (signalledAt !== null && steadyUnanswered() >= WORKERS),
      request: () => ({ path: '/v1/risk/evaluate', key: KEY_A, body: evaluationBody({ email: 'jane@fast.example' }) }),
      inspect: (answer) => {
        if (signalledAt !== null && answer.sentAt >= signalledAt) afterSignal.push(String(answer.status));
        return answer;
      },
    });
    const steadyUnanswered = (): number => steady.figures.noResponse.length;
    await expect.poll(() => steady.figures.outcomes['200'] ?? 0, { timeout: 10_000, interval: 20 }).toBeGreaterThan(10 * WORKERS);

    const wave = held.map((name) => evaluate(url, name));
    await dns.waitForQueries(HELD);
    signalledAt = performance.now();
    child.kill('SIGTERM');

    const answers = await Promise.all(wave);
    const code = await exited;
    const figures = await steady.done;
    const drainMs = Math.round(exitedAt! - signalledAt);
    if (code !== 0) console.log(service.output());

    expect(answers.map((a) => a.status)).toEqual(held.map(() => 200));
    expect(answers.map((a) => (a.body as { email: { deliverability: string } }).email.deliverability)).toEqual(held.map(() => 'deliverable'));
    // Regression: answers sent during the drain tell the client not to reuse the connection.
    expect(answers.map((a) => a.connection)).toEqual(held.map(() => 'close'));
    expect(code).toBe(0);
    expect(drainMs).toBeLessThan(GRACE_MS);

    // The steady load: every HTTP answer is a 200. A request that met the drain at the connection
    // (refused, or reset on a keep-alive connection the close found idle: HTTP/1.1's race, which
    // is why a balancer must stop routing first) never reached the service: every evaluation the
    // service logged as answered, the client received.
    expect(afterSignal.filter((s) => s !== '200')).toEqual([]);
    expect(Object.keys(figures.outcomes).filter((k) => /^\d+$/.test(k) && k !== '200')).toEqual([]);
    const logged = service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { url?: string; status?: number })
      .filter((line) => line.url === '/v1/risk/evaluate');
    expect(logged.filter((line) => line.status !== 200)).toEqual([]);
    expect(logged.length).toBe(HELD + (figures.outcomes['200'] ?? 0));
    expect(service.output()).toContain('"msg":"stopped"');
    console.log(
      `shutdown under load: ${HELD} held requests in flight at SIGTERM, all answered 200; steady load ${figures.sent} requests ` +
        `(${JSON.stringify(figures.outcomes)}; ${afterSignal.length} answered after the signal); the service answered ${logged.length} evaluations, ` +
        `the clients received ${logged.length}; exit 0 after ${drainMs} ms (grace ${GRACE_MS} ms)`,
    );
  });
});
