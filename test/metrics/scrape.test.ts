import { readFileSync } from 'node:fs';
import Sqlite from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { version } from '../../src/app.js';
import { CappedCounts, OTHER } from '../../src/metrics/counts.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { parseScrape, type Scrape } from '../support/prometheus.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';

/**
 * `/metrics` of the real app, after traffic whose effect is known, read back with an independent
 * Prometheus text parser (test/support/prometheus.ts). Here on the service's own port with
 * METRICS_TOKEN; the listener of its own (METRICS_PORT) is in listener.test.ts.
 */

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';
const MX = { MX: [{ exchange: 'mx.good.example', priority: 10 }] };

let t: TestApp | undefined;
let dns: TestDnsServer | undefined;
afterEach(async () => {
  await t?.app.close();
  await dns?.close();
  t = undefined;
  dns = undefined;
});

async function scrape(app: TestApp['app']): Promise<Scrape> {
  const response = await app.inject({ url: '/metrics', headers: bearer(TOKEN) });
  expect(response.statusCode).toBe(200);
  return parseScrape(response.body);
}

/**
 * Runs `during` with one of the store's tables renamed by another connection (someone else's
 * migration gone wrong: the writer finds no table where it expects one), then puts it back.
 */
async function withTableMoved(t: TestApp, table: string, during: () => Promise<void>): Promise<void> {
  const outside = new Sqlite(t.config.database.engine === 'sqlite' ? t.config.database.path : '');
  outside.exec(`alter table ${table} rename to ${table}_moved`);
  try {
    await during();
  } finally {
    outside.exec(`alter table ${table}_moved rename to ${table}`);
    outside.close();
  }
}

const evaluate = (app: TestApp['app'], body: object, key = KEY_A) =>
  app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload: body });

describe('/metrics access on the service port', () => {
  it('is not served at all without METRICS_PORT or METRICS_TOKEN, and nothing is recorded', async () => {
    t = await startTestApp();
    expect(t.app.metrics).toBeNull();
    const response = await t.app.inject({ url: '/metrics', headers: bearer(TOKEN) });
    expect(response.statusCode).toBe(404);
  });

  it('refuses a scrape without the token, or with another one, as a problem naming the scheme', async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN });
    for (const headers of [{}, bearer(`${TOKEN}x`), bearer(KEY_A), { authorization: `Basic ${TOKEN}` }]) {
      const response = await t.app.inject({ url: '/metrics', headers });
      expect(response.statusCode).toBe(401);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(response.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(response.json()).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('METRICS_TOKEN') });
      expect(response.body).not.toContain('risk_');
    }
  });

  it('serves the text format with the token (any case of the scheme)', async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN });
    const response = await t.app.inject({ url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const m = parseScrape(response.body);
    expect(m.series('risk_build_info')).toEqual([{ version }]);
    expect(m.value('risk_build_info', { version })).toBe(1);
  });
});

describe.each(ENGINES)('behaviour history in /metrics (%s)', (engine) => {
  it('exposes what waits and what was lost, and only the gauges this store has', async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN, DATABASE_URL: await freshDatabaseUrl(engine) });
    for (let i = 0; i < 3; i++) expect((await evaluate(t.app, evaluationBody({ ip: `81.2.69.${161 + i}`, email: `jane${i}@example.com` }))).statusCode).toBe(200);
    const app = t.app;
    await vi.waitFor(async () => expect((await scrape(app)).value('risk_history_pending')).toBe(0), { timeout: 10_000 });
    const m = await scrape(app);
    expect(m.families.get('risk_history_pending')?.type).toBe('gauge');
    expect(m.value('risk_history_changes_total', { outcome: 'refused' })).toBe(0);
    expect(m.value('risk_history_changes_total', { outcome: 'failed' })).toBe(0);
    expect(m.families.get('risk_history_pruned_total')?.type).toBe('counter');
    if (engine === 'sqlite') {
      expect(m.value('risk_history_held')).toBe(6); // three addresses, three e-mail addresses
      expect(m.families.has('risk_history_reads_waiting')).toBe(false);
    } else {
      expect(m.value('risk_history_reads_waiting')).toBe(0);
      expect(m.families.has('risk_history_held')).toBe(false);
      expect(m.families.has('risk_history_held_bytes')).toBe(false);
    }
  });
});

describe('/metrics after known traffic', () => {
  it('counts evaluations by state, rule hits, unavailable checks, DNS outcomes and requests by route and status', async () => {
    dns = await startDnsServer({
      zone: { 'good.example': MX, 'mailinator.com': MX, 'broken.example': MX },
      faults: { 'broken.example': { kind: 'servfail' } },
    });
    t = await startTestApp({ METRICS_TOKEN: TOKEN, DNS_SERVERS: `127.0.0.1:${dns.port}` });
    const { app } = t;

    // Each from its own address (81.2.69.160/27 is one network in the test data): six sign-ups from
    // one address in an hour would be ip_velocity's review.
    for (let i = 0; i < 3; i++) expect((await evaluate(app, evaluationBody({ ip: `81.2.69.${161 + i}`, email: `jane${i}@good.example` }))).json().score.state).toBe('approve');
    // Disposable (40): decline.
    for (let i = 0; i < 2; i++) expect((await evaluate(app, evaluationBody({ ip: `81.2.69.${170 + i}`, email: `x${i}@mailinator.com` }))).json().score.state).toBe('decline');
    // A DNS fault: the MX check could not run, nothing fired.
    const faulty = (await evaluate(app, evaluationBody({ ip: '81.2.69.180', email: 'jane@broken.example' }))).json();
    expect(faulty).toMatchObject({ score: { state: 'approve' }, unavailable: expect.arrayContaining(['email.mx']) });
    expect((await evaluate(app, { ip: 'not an address' })).statusCode).toBe(400);
    expect((await evaluate(app, evaluationBody(), 'wrong-key-0123456789abcdef0123456789')).statusCode).toBe(401);
    expect((await app.inject('/no/such/route/1')).statusCode).toBe(404);
    expect((await app.inject('/no/such/route/2')).statusCode).toBe(404);
    await app.store.log.flush();
    await app.reloadConfiguration();

    const m = await scrape(app);
    expect(m.value('risk_evaluations_total', { event_type: 'account_register', state: 'approve' })).toBe(4);
    expect(m.value('risk_evaluations_total', { event_type: 'account_register', state: 'decline' })).toBe(2);
    expect(m.value('risk_evaluations_total', { state: 'review' })).toBe(0);
    expect(m.value('risk_rule_hits_total', { rule: 'email_disposable', mode: 'live' })).toBe(2);
    expect(m.value('risk_rule_hits_total', { rule: 'email_undeliverable' })).toBe(0);
    expect(m.value('risk_checks_unavailable_total', { check: 'email.mx' })).toBe(1);
    // No Tor list in DATA_DIR: every evaluation said so.
    expect(m.value('risk_checks_unavailable_total', { check: 'ip.tor' })).toBe(6);
    expect(m.value('risk_dns_lookups_total', { outcome: 'servfail' })).toBe(1);
    // One MX look-up per domain (good.example, then mailinator.com); the rest came from the cache.
    expect(m.value('risk_dns_lookups_total', { outcome: 'records' })).toBe(2);
    expect(m.value('risk_dns_cache_hits_total')).toBeGreaterThanOrEqual(3);
    expect(m.value('risk_dns_cache_entries')).toBe(2);
    expect(m.value('risk_dns_cache_bytes')).toBeGreaterThan(0);
    expect(m.value('risk_dns_cache_max_entries')).toBe(10_000);
    expect(m.value('risk_dns_queries_in_flight')).toBe(0);
    expect(m.value('risk_dns_server_backing_off', { server: `127.0.0.1:${dns.port}` })).toBe(0);

    const route = '/v1/risk/evaluate';
    expect(m.histogram('risk_http_request_duration_seconds', { method: 'POST', route, status: '200' }).count).toBe(6);
    expect(m.histogram('risk_http_request_duration_seconds', { method: 'POST', route, status: '400' }).count).toBe(1);
    expect(m.histogram('risk_http_request_duration_seconds', { method: 'POST', route, status: '401' }).count).toBe(1);
    // Unmatched paths are one series, whatever the path.
    expect(m.histogram('risk_http_request_duration_seconds', { route: 'unmatched', status: '404' }).count).toBe(2);
    expect(m.series('risk_http_request_duration_seconds').map((s) => s.route)).not.toContain('/no/such/route/1');

    expect(m.value('risk_evaluation_log_records_total', { outcome: 'written' })).toBe(6);
    expect(m.value('risk_evaluation_log_records_total', { outcome: 'dropped' })).toBe(0);
    expect(m.value('risk_evaluation_log_queued')).toBe(0);
    expect(m.value('risk_store_up')).toBe(1);
    // Behaviour history (SQLite, on by default): what it holds, read from the store at the scrape.
    const history = app.store.status().history!;
    expect(history.cached).toBeGreaterThanOrEqual(12); // six addresses and six e-mail addresses at least
    expect(m.value('risk_history_held')).toBe(history.cached);
    expect(m.value('risk_history_held_bytes')).toBe(history.bytes);
    expect(m.value('risk_history_changes_total', { outcome: 'refused' })).toBe(0);
    expect(m.value('risk_history_changes_total', { outcome: 'failed' })).toBe(0);
    // PostgreSQL's own gauge is not there: no 0 that means nothing.
    expect(m.families.get('risk_history_reads_waiting')).toBeUndefined();
    // Written back within its delay (50 ms): nothing left waiting.
    await vi.waitFor(async () => expect((await scrape(app)).value('risk_history_pending')).toBe(0), { timeout: 10_000 });
    expect(m.histogram('risk_store_operation_duration_seconds', { operation: 'poll' }).count).toBeGreaterThanOrEqual(1);
    expect(m.histogram('risk_store_operation_duration_seconds', { operation: 'log_write' }).count).toBeGreaterThanOrEqual(1);

    // The bundled open data has a build date: its age is measured from it.
    const geo = app.sources().find((s) => s.name === 'ip.open.country')!;
    const age = m.value('risk_data_source_age_seconds', { source: geo.name });
    expect(Math.abs(age - (Date.now() - Date.parse(geo.build_date!)) / 1000)).toBeLessThan(60);
    expect(m.value('risk_data_source_loaded', { source: geo.name })).toBe(1);
    expect(m.value('risk_data_source_refused', { source: geo.name })).toBe(0);
    expect(m.value('risk_data_source_loaded', { source: 'ip.list.tor' })).toBe(0);

    // Process and event loop, from prom-client's defaults.
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(m.families.get('nodejs_eventloop_lag_p99_seconds')?.type).toBe('gauge');
    expect(m.families.get('nodejs_gc_duration_seconds')?.type).toBe('histogram');
  });

  it('counts a log batch the store refused as failed, and the store error', async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN, RELOAD_INTERVAL_MS: '600000' });
    const { app } = t;
    expect((await evaluate(app, evaluationBody())).statusCode).toBe(200);
    await app.store.log.flush();

    // The log's table is not where the writer expects it.
    await withTableMoved(t, 'evaluations', async () => {
      for (let i = 0; i < 3; i++) expect((await evaluate(app, evaluationBody())).statusCode).toBe(200);
      await app.store.log.flush();
      const m = await scrape(app);
      expect(m.value('risk_evaluation_log_records_total', { outcome: 'written' })).toBe(1);
      expect(m.value('risk_evaluation_log_records_total', { outcome: 'failed' })).toBe(3);
      expect(m.value('risk_store_errors_total', { operation: 'log_write' })).toBe(1);
      expect(m.value('risk_store_up')).toBe(0);
    });
    // The next poll finds the store answering again.
    await app.reloadConfiguration();
    expect((await scrape(app)).value('risk_store_up')).toBe(1);
  });

  it('counts the history changes a write-back could not keep', async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN, RELOAD_INTERVAL_MS: '600000' });
    const { app } = t;
    await withTableMoved(t, 'history_packed', async () => {
      // A person never seen: their address and e-mail address to write back, two identifiers.
      expect((await evaluate(app, evaluationBody({ email: 'new.person@good.example' }))).statusCode).toBe(200);
      await vi.waitFor(() => expect(app.store.status().history!.failed).toBeGreaterThan(0), { timeout: 10_000 });
      const m = await scrape(app);
      expect(m.value('risk_history_changes_total', { outcome: 'failed' })).toBe(2);
      expect(m.value('risk_history_changes_total', { outcome: 'refused' })).toBe(0);
      expect(m.value('risk_history_pending')).toBe(0);
    });
  });

  it('exposes no history metric with history off', async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN, HISTORY_DAYS: '0' });
    const m = await scrape(t.app);
    expect([...m.families.keys()].filter((name) => name.startsWith('risk_history_'))).toEqual([]);
    expect(m.value('risk_store_up')).toBe(1);
  });

  it('uses only metric names /metrics exposes in the Grafana dashboard', async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN });
    expect((await evaluate(t.app, evaluationBody())).statusCode).toBe(200);
    // Declared names: a counter that has counted nothing yet has no sample, nor a histogram that has observed nothing.
    const exposed = (await scrape(t.app)).declared;
    const dashboard = JSON.parse(readFileSync('deploy/grafana/risk-evaluation.json', 'utf8')) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
    const used = new Set<string>();
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) {
        // Metric names: identifiers not followed by `(` (functions), `=` or a quote (label matchers), nor keywords.
        const names = target.expr.replace(/\{[^}]*\}/g, '').replace(/\$\w+/g, '').replace(/\b(by|without|on|ignoring|le)\s*\([^)]*\)/g, '').match(/\b[a-z_][a-z0-9_]*\b(?!\s*\()/g) ?? [];
        for (const name of names) used.add(name);
      }
    }
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((name) => !exposed.has(name))).toEqual([]);
  });
});

describe('label caps', () => {
  it('counts values past the cap as `other`, and keeps counting those seen before', () => {
    const counts = new CappedCounts(2, () => ({ n: 0 }));
    for (const value of ['a', 'b', 'c', 'a', 'd', 'b', 'a']) counts.of(value).n += 1;
    expect(Object.fromEntries([...counts.entries()].map(([value, { n }]) => [value, n]))).toEqual({ a: 3, b: 2, [OTHER]: 2 });
  });
});
