import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDownload } from '../../src/data-update/fetch.js';
import { runDataUpdate } from '../../src/data-update/run.js';
import { settingsFrom } from '../../src/data-update/settings.js';
import { bearer } from '../support/app.js';
import { BROWSER_TEST_TIMEOUT_MS, logIn, openConsole, openDataSources, OWNER, useConsoleInChromium } from '../support/console.js';
import { CLOUD_URLS, sourcesAt, startOrigin, type Origin } from '../data-update/origin.js';

/**
 * Provenance of what the data job fetched, per source, where an operator looks: the Data sources
 * page (in Debian's Chromium) and `/metrics`. The job runs for real against recorded upstream files
 * on a loopback server, into the running service's DATA_DIR: one proxy list good, one an error page.
 */
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';
const dataDir = mkdtempSync(join(tmpdir(), 'risk-fetched-'));
const ctx = useConsoleInChromium({ env: { DATA_DIR: dataDir, METRICS_TOKEN: TOKEN } });
let origin: Origin;

beforeAll(async () => {
  origin = await startOrigin();
  const env = {
    ...sourcesAt(origin.base), DATA_DIR: dataDir, MAXMIND_ACCOUNT_ID: '', DATA_UPDATE_ATTEMPTS: '1',
    ...Object.fromEntries(CLOUD_URLS.map((v) => [v, 'off'])),
    DATA_UPDATE_PROXY_URLS: `${origin.base}/proxy-list,${origin.base}/proxy-html`,
  };
  const settings = settingsFrom(env);
  await runDataUpdate(settings, { now: () => new Date('2026-11-21T12:00:00Z'), download: createDownload({ timeoutMs: 5000, attempts: 1, retryDelayMs: 0 }) });
});
afterAll(() => origin?.close());

describe('what the data job fetched', () => {
  it('shows each source: its URL, last good fetch, entries and last error, on the Data sources page and in /metrics', async () => {
    const good = 'ip.fetched.proxy:proxy-list';
    const bad = 'ip.fetched.proxy:proxy-html';
    const shown = (name: string) => name.replace(/^(email|ip)\.fetched\./, '');
    const { context, page, troubles } = await openConsole(ctx.browser, ctx.server.origin);
    try {
      await logIn(page, OWNER);
      await openDataSources(page);
      const fetched = page.getByRole('region', { name: 'Fetched by the data job' });
      const row = (name: string) => fetched.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^${name.replace(/[.:-]/g, '\\$&')} `) }) });
      const proxy = await row(shown(good)).innerText();
      expect(proxy).toContain('fetched into proxy-list.txt');
      expect(proxy).toContain(`${origin.base}/proxy-list`);
      expect(proxy).toContain('2026-11-21 12:00 UTC');
      expect(proxy).toMatch(/\b6\b/);
      const failing = await row(shown(bad)).innerText();
      expect(failing).toContain('never');
      expect(failing).toContain('0 addresses and 2 malformed lines: not a range list');
      for (const name of ['tor', 'vpn:vpn-mullvad', 'mx-hosts:mx-hosts', 'agree:broad-burner']) {
        await expect(row(name).count(), name).resolves.toBe(1);
      }
      if (process.env.SCREENSHOT_DIR) {
        await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, 'data-sources-top.png') });
        await fetched.scrollIntoViewIfNeeded();
        await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, 'data-sources-fetched.png') });
      }
      // The job's rows are a table of their own: the files' table keeps its columns.
      await expect(page.getByRole('rowheader', { name: /^(email|ip)\.fetched\./ }).count()).resolves.toBe(0);
      await expect(fetched.getByRole('rowheader').count()).resolves.toBe(11);
      expect(troubles).toEqual([]);
    } finally {
      await context.close();
    }

    const metrics = (await ctx.server.app.inject({ url: '/metrics', headers: bearer(TOKEN) })).body;
    expect(metrics).toContain(`risk_data_source_entries{source="${good}"} 6`);
    expect(metrics).toContain(`risk_data_source_loaded{source="${bad}"} 0`);
    expect(metrics).toContain(`risk_data_source_refused{source="${bad}"} 1`);
    expect(metrics).toMatch(new RegExp(`risk_data_source_age_seconds\\{source="${good.replace(/[.:/-]/g, '\\$&')}"\\} \\d+`));
  });
});
