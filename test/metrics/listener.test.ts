import { afterEach, describe, expect, it } from 'vitest';
import { listenForMetrics, type MetricsListener } from '../../src/metrics/listener.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { freePort, startServiceProcess, type ServiceProcess } from '../support/process.js';
import { parseScrape } from '../support/prometheus.js';

/**
 * `/metrics` on a listener of its own (METRICS_PORT): the real process as `server.ts` runs it, and
 * the listener alone on the real app. The API port never serves it then.
 */

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';

let service: ServiceProcess | undefined;
let t: TestApp | undefined;
let listener: MetricsListener | undefined;
afterEach(async () => {
  await listener?.close();
  await t?.app.close();
  await service?.stop();
  listener = undefined;
  t = undefined;
  service = undefined;
});

describe('the metrics listener', () => {
  it('in the real process: on METRICS_PORT, on 127.0.0.1, with the token; never on the API port', async () => {
    const metricsPort = await freePort();
    service = await startServiceProcess({ API_KEYS: KEY_A, METRICS_PORT: String(metricsPort), METRICS_TOKEN: TOKEN });
    const evaluated = await fetch(`${service.url}/v1/risk/evaluate`, {
      method: 'POST',
      headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
      body: JSON.stringify(evaluationBody()),
    });
    expect(evaluated.status).toBe(200);

    expect((await fetch(`${service.url}/metrics`, { headers: bearer(TOKEN) })).status).toBe(404);
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const refused = await fetch(metricsUrl);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await refused.json()).toMatchObject({ code: 'unauthorized' });

    const scraped = await fetch(metricsUrl, { headers: bearer(TOKEN) });
    expect(scraped.status).toBe(200);
    const m = parseScrape(await scraped.text());
    expect(m.value('risk_evaluations_total', { event_type: 'account_register', state: 'approve' })).toBe(1);
    expect(m.histogram('risk_http_request_duration_seconds', { route: '/v1/risk/evaluate', status: '200' }).count).toBe(1);
    expect(service.output()).toContain(`"metrics":{"address":"127.0.0.1","family":"IPv4","port":${metricsPort}}`);

    // It drains and stops with the service.
    expect(await service.stop()).toBe(0);
    await expect(fetch(metricsUrl, { headers: bearer(TOKEN) })).rejects.toThrow();
  }, 90_000);

  it('without a token, serves anyone who reaches it, and only GET or HEAD /metrics', async () => {
    t = await startTestApp({ METRICS_PORT: String(await freePort()) });
    expect(t.app.metrics).not.toBeNull();
    listener = await listenForMetrics({ metrics: t.app.metrics!, host: t.config.metrics.host, port: t.config.metrics.port!, token: null });
    expect(listener.address.address).toBe('127.0.0.1');
    const base = `http://127.0.0.1:${listener.address.port}`;

    const scraped = await fetch(`${base}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(parseScrape(await scraped.text()).value('risk_store_up')).toBe(1);
    expect((await fetch(`${base}/metrics`, { method: 'HEAD' })).status).toBe(200);

    const elsewhere = await fetch(`${base}/v1/risk/evaluate`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    const posted = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
    // The API port has no /metrics when it has a listener of its own.
    expect((await t.app.inject('/metrics')).statusCode).toBe(404);
  });
});
