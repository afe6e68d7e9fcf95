import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runDataUpdate } from '../../scripts/data-update/run.js';
import { settingsFrom, SettingsError } from '../../scripts/data-update/settings.js';
import { createIpInspector } from '../../src/ip/index.js';
import { capturedLogger, configFor, ip, tempDir } from '../ip/fixtures.js';
import { asnDatabase, asnRecord, cityDatabase, cityRecord } from '../support/mmdb.js';
import { tarGz } from '../support/tar.js';

const AUTH = `Basic ${Buffer.from('12345:secret-key').toString('base64')}`;

/** Fixture files as the real sources serve them (trimmed), plus broken ones. */
const routes: Record<string, (req: IncomingMessage, res: ServerResponse, base: string) => void> = {
  '/tor': (_q, res) => res.end('185.220.101.1\n185.220.101.2\n2a0b:f4c2::1\n'),
  '/tor-broken': (_q, res) => res.end('<!doctype html>\n<html><body>Service Unavailable</body></html>\n'),
  '/aws.json': (_q, res) => res.end(JSON.stringify({
    syncToken: '1', prefixes: [{ ip_prefix: '3.0.0.0/9', region: 'us-east-1', service: 'AMAZON' }],
    ipv6_prefixes: [{ ipv6_prefix: '2600:1f00::/24', region: 'us-east-1', service: 'AMAZON' }],
  })),
  '/google.json': (_q, res) => res.end(JSON.stringify({
    prefixes: [{ ipv4Prefix: '34.64.0.0/10', service: 'Google Cloud' }, { ipv6Prefix: '2600:1900::/28', service: 'Google Cloud' }],
  })),
  '/azure': (_q, res, base) => res.end(`<html><a href="${base}/download/ServiceTags_Public_20261116.json">Download</a></html>`),
  '/download/ServiceTags_Public_20261116.json': (_q, res) => res.end(JSON.stringify({
    values: [{ name: 'AzureCloud', properties: { addressPrefixes: ['20.33.0.0/16', '2603:1000::/40'] } }],
  })),
  '/oracle.json': (_q, res) => res.end(JSON.stringify({ regions: [{ region: 'us-phoenix-1', cidrs: [{ cidr: '129.146.0.0/21', tags: ['OCI'] }] }] })),
  '/oracle-500': (_q, res) => {
    res.statusCode = 500;
    res.end('internal error');
  },
  '/do.csv': (_q, res) => res.end('104.131.0.0/18,US,US-NY,New York,10011\n2604:a880::/32,US,US-NY,New York,10011\n'),
  '/cf-v4': (_q, res) => res.end('173.245.48.0/20\n'),
  '/cf-v6': (_q, res) => res.end('2400:cb00::/32\n'),
  '/geoip/databases/GeoLite2-City/download': (req, res) => {
    if (req.headers.authorization !== AUTH) {
      res.statusCode = 401;
      return void res.end('unauthorized');
    }
    const mmdb = cityDatabase(6, [{ network: '81.2.69.0/24', data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'London' }) }]);
    res.end(tarGz([{ name: 'GeoLite2-City_20261120/COPYRIGHT.txt', content: 'test' }, { name: 'GeoLite2-City_20261120/GeoLite2-City.mmdb', content: mmdb }]));
  },
  // A broken source: the archive holds a database cut short.
  '/geoip/databases/GeoLite2-ASN/download': (_q, res) => {
    const mmdb = asnDatabase(6, [{ network: '81.2.69.0/24', data: asnRecord(20712, 'A&A') }]);
    res.end(tarGz([{ name: 'GeoLite2-ASN_20261120/GeoLite2-ASN.mmdb', content: mmdb.subarray(0, mmdb.length - 100) }]));
  },
};

let server: Server;
let base: string;
const requested: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', base).pathname;
    requested.push(path);
    const route = routes[path];
    if (route) route(req, res, base);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  requested.length = 0;
});
afterEach(() => cleanup());

/** Every source pointed at the local server; nothing leaves 127.0.0.1. */
const env = (overrides: Record<string, string> = {}) => ({
  DATA_DIR: dir,
  DATA_UPDATE_TIMEOUT_MS: '5000',
  DATA_UPDATE_TOR_URL: `${base}/tor`,
  DATA_UPDATE_AWS_URL: `${base}/aws.json`,
  DATA_UPDATE_GOOGLE_URL: `${base}/google.json`,
  DATA_UPDATE_AZURE_URL: `${base}/azure`,
  DATA_UPDATE_ORACLE_URL: `${base}/oracle.json`,
  DATA_UPDATE_DIGITALOCEAN_URL: `${base}/do.csv`,
  DATA_UPDATE_CLOUDFLARE_URLS: `${base}/cf-v4,${base}/cf-v6`,
  DATA_UPDATE_MAXMIND_URL: `${base}/geoip/databases`,
  MAXMIND_ACCOUNT_ID: '12345',
  MAXMIND_LICENSE_KEY: 'secret-key',
  ...overrides,
});

const now = () => new Date('2026-11-21T12:00:00Z');
const outcomes = (results: { source: string; outcome: string }[]) => Object.fromEntries(results.map((r) => [r.source, r.outcome]));

describe('npm run data:update', () => {
  it('fetches every source, validates it, renames it into place, and a broken source fails alone', async () => {
    const report = await runDataUpdate(settingsFrom(env()), now);
    expect(outcomes(report.results)).toEqual({
      tor: 'updated',
      'cloud:aws': 'updated', 'cloud:google': 'updated', 'cloud:azure': 'updated',
      'cloud:oracle': 'updated', 'cloud:digitalocean': 'updated', 'cloud:cloudflare': 'updated',
      'maxmind:GeoLite2-City': 'updated',
      'maxmind:GeoLite2-ASN': 'failed',
    });
    expect(report.exitCode).toBe(1);
    expect(report.results.find((r) => r.source === 'maxmind:GeoLite2-ASN')?.detail).toMatch(/not a MaxMind DB|truncated|corrupt/);
    expect((await readdir(dir)).sort()).toEqual(['GeoLite2-City.mmdb', 'datacenter-ranges.txt', 'tor-exit-nodes.txt']);

    const ranges = await readFile(join(dir, 'datacenter-ranges.txt'), 'utf8');
    expect(ranges).toContain(`# source: aws ${base}/aws.json fetched 2026-11-21T12:00:00.000Z\n3.0.0.0/9\n2600:1f00::/24`);
    for (const cidr of ['34.64.0.0/10', '20.33.0.0/16', '2603:1000::/40', '129.146.0.0/21', '104.131.0.0/18', '173.245.48.0/20', '2400:cb00::/32']) {
      expect(ranges).toContain(`\n${cidr}\n`);
    }

    // The service reads what was written.
    const inspector = await createIpInspector({ config: configFor(dir), logger: capturedLogger().logger, openData: null });
    try {
      expect(inspector.inspect(ip('185.220.101.2')).facts.is_tor).toBe(true);
      expect(inspector.inspect(ip('20.33.1.1')).facts.is_datacenter).toBe(true);
      expect(inspector.inspect(ip('2604:a880::1')).facts.is_datacenter).toBe(true);
      expect(inspector.inspect(ip('81.2.69.1')).facts.city).toBe('London');
    } finally {
      await inspector.close();
    }
  });

  it('keeps the previous file when a source serves something that is not its format', async () => {
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '162.247.74.201\n');
    const report = await runDataUpdate(settingsFrom(env({ DATA_UPDATE_TOR_URL: `${base}/tor-broken`, MAXMIND_ACCOUNT_ID: '' })), now);
    expect(outcomes(report.results).tor).toBe('failed');
    expect(report.results.find((r) => r.source === 'tor')?.detail).toContain(`${base}/tor-broken`);
    expect(await readFile(join(dir, 'tor-exit-nodes.txt'), 'utf8')).toBe('162.247.74.201\n');
  });

  it("keeps a failing provider's previous ranges and the operator's own lines", async () => {
    await writeFile(join(dir, 'datacenter-ranges.txt'), [
      '# my own hosting ranges',
      '198.51.100.0/24',
      '# source: oracle https://old fetched 2026-11-01T00:00:00.000Z',
      '140.238.0.0/16',
      '# source: aws https://old fetched 2026-11-01T00:00:00.000Z',
      '52.0.0.0/8',
    ].join('\n'));
    const report = await runDataUpdate(settingsFrom(env({ DATA_UPDATE_ORACLE_URL: `${base}/oracle-500`, MAXMIND_LICENSE_KEY: '' })), now);
    const oracle = report.results.find((r) => r.source === 'cloud:oracle');
    expect(oracle).toMatchObject({ outcome: 'failed', detail: `${base}/oracle-500: HTTP 500 (previous ranges kept)` });
    const ranges = await readFile(join(dir, 'datacenter-ranges.txt'), 'utf8');
    expect(ranges).toContain('# my own hosting ranges\n198.51.100.0/24\n');
    expect(ranges).toContain('# source: oracle https://old fetched 2026-11-01T00:00:00.000Z\n140.238.0.0/16');
    expect(ranges).not.toContain('52.0.0.0/8'); // aws was refreshed
    expect(ranges.match(/# my own hosting ranges/g)).toHaveLength(1);
    // Running again does not duplicate anything.
    await runDataUpdate(settingsFrom(env({ DATA_UPDATE_ORACLE_URL: `${base}/oracle-500`, MAXMIND_LICENSE_KEY: '' })), now);
    expect(await readFile(join(dir, 'datacenter-ranges.txt'), 'utf8')).toBe(ranges);
  });

  it('skips the MaxMind databases without an account, without asking for them', async () => {
    const report = await runDataUpdate(settingsFrom(env({ MAXMIND_ACCOUNT_ID: '', MAXMIND_LICENSE_KEY: '' })), now);
    expect(report.results.filter((r) => r.source.startsWith('maxmind:'))).toEqual([
      { source: 'maxmind:GeoLite2-City', file: 'GeoLite2-City.mmdb', outcome: 'skipped', detail: 'MAXMIND_ACCOUNT_ID and MAXMIND_LICENSE_KEY are not set' },
      { source: 'maxmind:GeoLite2-ASN', file: 'GeoLite2-ASN.mmdb', outcome: 'skipped', detail: 'MAXMIND_ACCOUNT_ID and MAXMIND_LICENSE_KEY are not set' },
    ]);
    expect(report.exitCode).toBe(0);
    expect(requested.some((p) => p.startsWith('/geoip/'))).toBe(false);
  });

  it('fails a MaxMind download refused for bad credentials', async () => {
    const report = await runDataUpdate(settingsFrom(env({ MAXMIND_LICENSE_KEY: 'wrong', DATA_UPDATE_MAXMIND_EDITIONS: 'GeoLite2-City' })), now);
    expect(report.results.find((r) => r.source === 'maxmind:GeoLite2-City')).toMatchObject({ outcome: 'failed', detail: expect.stringContaining('HTTP 401') });
    expect(report.results.find((r) => r.source === 'maxmind:GeoLite2-City')?.detail).not.toContain('wrong');
  });

  it('reads its settings from the environment, with off to skip a source', () => {
    const settings = settingsFrom({ DATA_UPDATE_AZURE_URL: 'off', DATA_UPDATE_TOR_URL: 'off' });
    expect(settings.tor).toBeNull();
    expect(settings.clouds.map((c) => c.name)).toEqual(['aws', 'google', 'oracle', 'digitalocean', 'cloudflare']);
    expect(settings.clouds[0]?.urls).toEqual(['https://ip-ranges.amazonaws.com/ip-ranges.json']);
    expect(settings.dataDir).toBe('./data');
    expect(() => settingsFrom({ DATA_UPDATE_AWS_URL: 'ftp://x' })).toThrow(SettingsError);
    expect(() => settingsFrom({ DATA_UPDATE_TIMEOUT_MS: 'soon' })).toThrow(/DATA_UPDATE_TIMEOUT_MS/);
  });

  it('exits non-zero and prints a summary naming what was updated and what failed', async () => {
    const run = promisify(execFile);
    const result = await run(process.execPath, ['--import', 'tsx', 'scripts/data-update.ts'], {
      env: { PATH: process.env.PATH, ...env({ DATA_UPDATE_ORACLE_URL: `${base}/oracle-500`, MAXMIND_ACCOUNT_ID: '' }) },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/updated\s+tor\s+tor-exit-nodes\.txt\s+3 exit addresses/);
    expect(result.stdout).toMatch(/failed\s+cloud:oracle\s+datacenter-ranges\.txt\s+.*HTTP 500/);
    expect(result.stdout).toContain('6 updated, 1 failed, 2 skipped');
    expect(result.stdout).toContain('files replaced: tor-exit-nodes.txt, datacenter-ranges.txt');
  });
});
