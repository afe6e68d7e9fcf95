import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FIRST_RUN_MARKER, updateOnFirstStart } from '../../src/data-update/first-start.js';
import { createIpInspector } from '../../src/ip/index.js';
import { capturedLogger, configFor, ip, tempDir } from '../ip/fixtures.js';
import { sourcesAt, startOrigin, type Origin } from './origin.js';

let origin: Origin;
beforeAll(async () => {
  origin = await startOrigin();
});
afterAll(() => origin.close());

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(() => cleanup());

/** Every source on a port nothing listens on: an install without the internet. */
async function unreachable(): Promise<Record<string, string>> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return sourcesAt(`http://127.0.0.1:${port}`);
}

describe('the data job at first start', () => {
  it('runs once where the sources are reachable, then leaves it to the schedule', async () => {
    const { logger, lines } = capturedLogger();
    const env = { DATA_UPDATE_ON_START: 'true', ...sourcesAt(origin.base), MAXMIND_ACCOUNT_ID: '' };
    // Before the first run, the proxy and VPN signals are unknown, not clean.
    const inspector = await createIpInspector({ config: configFor(dir), logger: capturedLogger().logger, openData: null });
    try {
      const before = inspector.inspect(ip('85.8.47.198'));
      expect(before.facts).toMatchObject({ is_proxy: null, is_vpn: null });
      expect(before.unavailable).toEqual(expect.arrayContaining(['ip.proxy', 'ip.vpn']));
      const report = await updateOnFirstStart(env, dir, logger);
      expect(report?.results.filter((r) => r.outcome === 'updated').length).toBeGreaterThan(5);
      expect(await readdir(dir)).toEqual(expect.arrayContaining([FIRST_RUN_MARKER, 'tor-exit-nodes.txt', 'disposable-domains.txt', 'proxy-list.txt', 'vpn-list.txt']));
      await inspector.reload();
      expect(inspector.inspect(ip('85.8.47.198')).facts.is_proxy).toBe(true);
      expect(inspector.inspect(ip('23.144.160.67')).facts.is_vpn).toBe(true);
    } finally {
      await inspector.close();
    }
    expect(lines().some((l) => /data job at first start: \d+ sources updated/.test(String(l.msg)))).toBe(true);
    const before = origin.requested.length;
    expect(await updateOnFirstStart(env, dir, logger)).toBeNull();
    expect(origin.requested.length).toBe(before);
  });

  it('says plainly when nothing could be fetched, and tries again at the next start', async () => {
    const { logger, lines } = capturedLogger();
    const env = { DATA_UPDATE_ON_START: 'true', ...(await unreachable()), MAXMIND_ACCOUNT_ID: '' };
    const report = await updateOnFirstStart(env, dir, logger);
    expect(report?.results.every((r) => r.outcome !== 'updated')).toBe(true);
    const notice = lines().find((l) => String(l.msg).includes('no source could be fetched'));
    expect(notice?.msg).toContain('run `npm run data:update` where the internet is reachable');
    // Only the job's record of what failed and why (the Data sources page shows it): no data file, no marker.
    expect(await readdir(dir)).toEqual(['.data-update-status.json']);
  });

  it('does nothing unless DATA_UPDATE_ON_START is true', async () => {
    const { logger } = capturedLogger();
    const before = origin.requested.length;
    expect(await updateOnFirstStart({ ...sourcesAt(origin.base) }, dir, logger)).toBeNull();
    expect(origin.requested.length).toBe(before);
    await expect(readFile(join(dir, FIRST_RUN_MARKER))).rejects.toThrow();
  });
});
