import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createIpInspector, type ReloadingIpInspector } from '../../src/ip/index.js';
import { asnDatabase, asnRecord, cityDatabase, cityRecord } from '../support/mmdb.js';
import { capturedLogger, configFor, ip, openDataFixture, replaceFile, tempDir } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let inspector: ReloadingIpInspector | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  vi.useRealTimers();
  await inspector?.close();
  inspector = undefined;
  await cleanup();
});

const city = (code: string, name: string) =>
  cityDatabase(6, [{ network: '81.2.69.0/24', data: cityRecord({ countryCode: code, country: name }) }]);

async function start(openData: Awaited<ReturnType<typeof openDataFixture>> | null = null, reloadIntervalMs?: number) {
  const log = capturedLogger();
  inspector = await createIpInspector({ config: configFor(dir, reloadIntervalMs), logger: log.logger, openData });
  return { inspector, log };
}

describe('reloading data files while serving', () => {
  it('swaps in a good replacement database', async () => {
    const path = join(dir, 'GeoLite2-City.mmdb');
    await writeFile(path, city('GB', 'United Kingdom'));
    const { inspector } = await start();
    await replaceFile(path, city('IE', 'Ireland'));
    await inspector.reload();
    expect(inspector.inspect(ip('81.2.69.1')).facts.country_code).toBe('IE');
  });

  it('refuses a corrupt database, keeps the last good copy serving and shows the refusal', async () => {
    const path = join(dir, 'GeoLite2-City.mmdb');
    const good = city('GB', 'United Kingdom');
    await writeFile(path, good);
    const { inspector, log } = await start();

    // Truncated (metadata gone), garbage, and a valid file of the wrong type: each refused.
    for (const bad of [good.subarray(0, good.length - 200), Buffer.from('not a database at all'), asnDatabase(6, [])]) {
      await replaceFile(path, bad);
      await inspector.reload();
      expect(inspector.inspect(ip('81.2.69.1')).facts.country_code).toBe('GB');
      const status = inspector.status().find((s) => s.name === 'ip.maxmind.city');
      expect(status).toMatchObject({ loaded: true, type: 'GeoLite2-City', source: path });
      expect(status?.error).toContain(path);
    }
    const refusals = log.lines().filter((l) => l.level === 50 && l.msg === `ip data file refused: ${path}`);
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toMatchObject({ file: path, serving: path });

    await replaceFile(path, city('IE', 'Ireland'));
    await inspector.reload();
    expect(inspector.inspect(ip('81.2.69.1')).facts.country_code).toBe('IE');
    expect(inspector.status().find((s) => s.name === 'ip.maxmind.city')?.error).toBeNull();
  });

  it('refuses a corrupted data section found by the probe look-ups', async () => {
    const path = join(dir, 'GeoLite2-ASN.mmdb');
    const networks = Array.from({ length: 64 }, (_, i) => ({ network: `${i * 4 + 1}.0.0.0/8`, data: asnRecord(64500 + i, `Org ${i}`) }));
    const good = asnDatabase(6, networks);
    await writeFile(path, good);
    const { inspector } = await start();
    // Overwrite the data section (between the tree's separator and the metadata) with bytes that
    // decode as pointers far past the end of the file.
    const bad = Buffer.from(good);
    const dataStart = bad.indexOf(Buffer.alloc(16)) + 16;
    const metadataStart = bad.indexOf(Buffer.from('MaxMind.com')) - 3;
    bad.fill(0x3f, dataStart, metadataStart);
    await replaceFile(path, bad);
    await inspector.reload();
    expect(inspector.status().find((s) => s.name === 'ip.maxmind.asn')?.error).toMatch(/corrupt|look-up/);
    expect(inspector.inspect(ip('1.2.3.4')).facts.asn).toBe(64500);
  });

  it('refuses a list replaced by a malformed one, keeping the last good list', async () => {
    const path = join(dir, 'tor-exit-nodes.txt');
    await writeFile(path, '185.220.101.1\n');
    const { inspector, log } = await start();
    await replaceFile(path, '<!doctype html>\n<title>Error</title>\n');
    await inspector.reload();
    expect(inspector.inspect(ip('185.220.101.1')).facts.is_tor).toBe(true);
    expect(inspector.status().find((s) => s.name === 'ip.list.tor')?.error).toContain(path);
    expect(log.lines().some((l) => l.msg === `ip data file refused: ${path}`)).toBe(true);
  });

  it('regression: refuses an emptied list instead of reading it as "no address is listed"', async () => {
    // A download that failed before its first byte, `> file` in a script, a full disk: the file is
    // there and empty. Taking it would answer is_tor: false for every address, a guess stated as a fact.
    const path = join(dir, 'tor-exit-nodes.txt');
    await writeFile(path, '185.220.101.1\n');
    const { inspector } = await start();
    for (const empty of ['', '\n\n', '# Tor exit list\n']) {
      await replaceFile(path, empty);
      await inspector.reload();
      expect(inspector.inspect(ip('185.220.101.1')).facts.is_tor).toBe(true);
      expect(inspector.status().find((s) => s.name === 'ip.list.tor')).toMatchObject({ entries: 1, error: expect.stringContaining('no addresses') });
    }
  });

  it('unloads a removed file; the open data takes over from a removed MaxMind database', async () => {
    await writeFile(join(dir, 'GeoLite2-City.mmdb'), city('GB', 'United Kingdom'));
    await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(6, [{ network: '81.2.69.0/24', data: asnRecord(20712, 'A&A') }]));
    await writeFile(join(dir, 'proxy-list.txt'), '81.2.69.1\n');
    // Inside the test's DATA_DIR, removed with it; not a name the service reads.
    const { inspector } = await start(await openDataFixture(dir));
    expect(inspector.status().find((s) => s.name === 'ip.open.country')?.loaded).toBe(false);

    await rm(join(dir, 'GeoLite2-City.mmdb'));
    await rm(join(dir, 'proxy-list.txt'));
    await inspector.reload();
    const report = inspector.inspect(ip('81.2.69.1'));
    expect(report.facts).toMatchObject({ country_code: 'FR', asn: 20712, is_proxy: null });
    expect(report.unavailable).toContain('ip.proxy');
  });

  it('ends a list load in progress when closed: no refusal logged, nothing swapped in', async () => {
    const path = join(dir, 'datacenter-ranges.txt');
    const { inspector, log } = await start();
    await writeFile(path, Array.from({ length: 50_000 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.0/24`).join('\n'));
    const reloading = inspector.reload();
    await inspector.close();
    await reloading;
    expect(log.lines().filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(inspector.status().find((s) => s.name === 'ip.list.datacenter')).toMatchObject({ loaded: false, error: null });
  });

  it('notices a changed file on its own, every reload interval', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const path = join(dir, 'datacenter-ranges.txt');
    await writeFile(path, '3.0.0.0/9\n');
    const { inspector, log } = await start(null, 1000);
    await replaceFile(path, '3.0.0.0/9\n34.64.0.0/10\n');
    expect(inspector.inspect(ip('34.64.0.1')).facts.is_datacenter).toBe(false);
    const reloaded = log.waitFor((l) => l.msg === 'ip data source loaded: ip.list.datacenter' && l.entries === 2);
    await vi.advanceTimersByTimeAsync(999);
    expect(inspector.inspect(ip('34.64.0.1')).facts.is_datacenter).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await reloaded;
    expect(inspector.inspect(ip('34.64.0.1')).facts.is_datacenter).toBe(true);
  });
});

describe('preferred and fallback files', () => {
  it('serves GeoLite2 when GeoIP2 is refused at start, and keeps a serving GeoIP2 when its replacement is bad', async () => {
    const paid = join(dir, 'GeoIP2-City.mmdb');
    const free = join(dir, 'GeoLite2-City.mmdb');
    await writeFile(paid, 'corrupt');
    await writeFile(free, city('GB', 'United Kingdom'));
    const { inspector } = await start();
    expect(inspector.inspect(ip('81.2.69.1')).facts.country_code).toBe('GB');
    expect(inspector.status().find((s) => s.name === 'ip.maxmind.city')).toMatchObject({ source: free, error: expect.stringContaining(paid) });

    await replaceFile(paid, cityDatabase(6, [{ network: '81.2.69.0/24', data: cityRecord({ countryCode: 'IE', country: 'Ireland' }) }], 'GeoIP2-City'));
    await inspector.reload();
    expect(inspector.inspect(ip('81.2.69.1')).facts.country_code).toBe('IE');

    await replaceFile(paid, 'corrupt again');
    await inspector.reload();
    expect(inspector.inspect(ip('81.2.69.1')).facts.country_code).toBe('IE');
    expect(inspector.status().find((s) => s.name === 'ip.maxmind.city')).toMatchObject({ source: paid, error: expect.stringContaining(paid) });
  });
});
