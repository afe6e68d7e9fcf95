import { readFile } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownload } from '../../src/data-update/fetch.js';
import { runDataUpdate } from '../../src/data-update/run.js';
import { settingsFrom } from '../../src/data-update/settings.js';
import { STATUS_FILE } from '../../src/data-update/status.js';
import { createUser, login, type Session } from '../support/admin.js';
import { bearer, startTestApp, type TestApp } from '../support/app.js';
import { CLOUD_URLS, sourcesAt, startOrigin, type Origin } from './origin.js';

/**
 * What the data job records of a source URL, and what the service shows of it: an operator's mirror
 * may take `user:pass@` or `?token=`, and neither may reach the status file, `/metrics` or the Data
 * sources page's data (`GET /admin/v1/sources`). The job runs for real against the recorded files on
 * a loopback server, into the running service's DATA_DIR.
 */
const TOKEN = 'metrics-token-for-tests-0123456789abcdef';
const dataDir = mkdtempSync(join(tmpdir(), 'risk-status-'));
let origin: Origin;
let t: TestApp;
let owner: Session;

beforeAll(async () => {
  origin = await startOrigin();
  t = await startTestApp({ DATA_DIR: dataDir, METRICS_TOKEN: TOKEN });
  await createUser(t.app.store, 'owner@example.com', { owner: true });
  owner = await login(t.app, 'owner@example.com');
});
afterAll(async () => {
  await t?.app.close();
  await origin?.close();
});

const update = (overrides: Record<string, string>) => runDataUpdate(settingsFrom({
  ...sourcesAt(origin.base), DATA_DIR: dataDir, MAXMIND_ACCOUNT_ID: '', DATA_UPDATE_ATTEMPTS: '1',
  ...Object.fromEntries(CLOUD_URLS.map((v) => [v, 'off'])),
  ...overrides,
}), { now: () => new Date('2026-11-21T12:00:00Z'), download: createDownload({ timeoutMs: 5000, attempts: 1, retryDelayMs: 0 }) });

/** What the service shows: the Data sources page's data and the /metrics text. */
async function shown(): Promise<{ sources: Array<{ name: string; source: string | null; error: string | null }>; metrics: string }> {
  const sources = await t.app.inject({ url: '/admin/v1/sources', headers: owner.read });
  expect(sources.statusCode, sources.body).toBe(200);
  const metrics = await t.app.inject({ url: '/metrics', headers: bearer(TOKEN) });
  expect(metrics.statusCode, metrics.body).toBe(200);
  return { sources: sources.json().sources, metrics: metrics.body };
}

describe('the data job\'s status, as recorded and shown', () => {
  it('keeps userinfo and the query string of a source URL out of the status file, /metrics and the Data sources page', async () => {
    const withUser = origin.base.replace('http://', 'http://user:pass@');
    const report = await update({
      // Fetched: the loopback server ignores the query.
      DATA_UPDATE_PROXY_URLS: `${origin.base}/proxy-list?token=SECRET`,
      // Not fetched (fetch refuses a URL with credentials), so its error names the URL.
      DATA_UPDATE_VPN_URLS: `${withUser}/vpn-mullvad?token=SECRET`,
      // An HTTP error (404) naming the URL.
      DATA_UPDATE_TOR_URL: `${origin.base}/no-such-list?token=SECRET#frag`,
    });
    // What the job prints and logs is the same redacted report.
    expect(JSON.stringify(report)).not.toMatch(/SECRET|user:pass|pass@/);
    expect(report.results.find((r) => r.source === `proxy:${origin.base}/proxy-list?…`)).toMatchObject({ outcome: 'updated', url: `${origin.base}/proxy-list?…` });
    expect(report.results.find((r) => r.source === `vpn:${origin.base}/vpn-mullvad?…`)).toMatchObject({ outcome: 'failed', detail: expect.stringContaining(`${origin.base}/vpn-mullvad?…`) });

    const file = await readFile(join(dataDir, STATUS_FILE), 'utf8');
    expect(file).not.toMatch(/SECRET|user:pass|pass@/);
    expect(file).toContain(`"url": "${origin.base}/proxy-list?…"`);
    // Nor the list's own `# source:` line in DATA_DIR.
    expect(await readFile(join(dataDir, 'proxy-list.txt'), 'utf8')).toContain(`# source: ${origin.base}/proxy-list?… fetched 2026-11-21T12:00:00.000Z\n`);

    const { sources, metrics } = await shown();
    expect(JSON.stringify(sources)).not.toMatch(/SECRET|user:pass|pass@/);
    expect(metrics).not.toMatch(/SECRET|user:pass|pass@/);
    expect(sources.find((s) => s.name === 'ip.fetched.proxy:proxy-list')).toMatchObject({ source: `${origin.base}/proxy-list?…`, error: null });
    expect(sources.find((s) => s.name === 'ip.fetched.tor')).toMatchObject({ source: `${origin.base}/no-such-list?…`, error: expect.stringContaining(`${origin.base}/no-such-list?…`) });
    expect(metrics).toContain('risk_data_source_entries{source="ip.fetched.proxy:proxy-list"} 6');
  });

  it('shows a source URL that new URL() cannot parse by its redacted text, instead of answering 500', async () => {
    // The settings take any http(s):// text; this one is not a URL (an unclosed IPv6 bracket).
    const report = await update({ DATA_UPDATE_PROXY_URLS: 'https://user:pass@[x/list?token=SECRET', DATA_UPDATE_VPN_URLS: 'off' });
    expect(report.results.find((r) => r.source === 'proxy:https://[x/list?…')).toMatchObject({ outcome: 'failed', url: 'https://[x/list?…' });
    expect(await readFile(join(dataDir, STATUS_FILE), 'utf8')).not.toMatch(/SECRET|user:pass|pass@/);

    const { sources, metrics } = await shown();
    expect(sources.find((s) => s.name === 'ip.fetched.proxy:https://[x/list?…')).toMatchObject({ source: 'https://[x/list?…', error: expect.any(String) });
    expect(metrics).toContain('risk_data_source_loaded{source="ip.fetched.proxy:https://[x/list?…"} 0');
    expect(JSON.stringify(sources)).not.toMatch(/SECRET|user:pass|pass@/);
    expect(metrics).not.toMatch(/SECRET|user:pass|pass@/);
  });
});
