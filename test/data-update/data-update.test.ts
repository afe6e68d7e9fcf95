import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDownload } from '../../src/data-update/fetch.js';
import { runDataUpdate } from '../../src/data-update/run.js';
import { fetchedSourceStatus, readStatusFile } from '../../src/data-update/status.js';
import { describeProxy, settingsFrom, SettingsError, type UpdateSettings } from '../../src/data-update/settings.js';
import { isDisposable, isListedDisposable } from '../../src/email/disposable.js';
import { openEmailSources } from '../../src/email/sources.js';
import { createIpInspector } from '../../src/ip/index.js';
import { capturedLogger, configFor, ip, tempDir } from '../ip/fixtures.js';
import { CLOUD_URLS, sourcesAt, startOrigin, type Origin } from './origin.js';

let origin: Origin;
let base: string;
const hits = (path: string) => origin.hits(path);

beforeAll(async () => {
  origin = await startOrigin();
  base = origin.base;
});
afterAll(() => origin.close());

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  origin.requested.length = 0;
});
afterEach(() => cleanup());

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Every source pointed at the local server; nothing leaves 127.0.0.1. */
const env = (overrides: Record<string, string> = {}) => ({ DATA_DIR: dir, DATA_UPDATE_TIMEOUT_MS: '5000', ...sourcesAt(base), ...overrides });

const now = () => new Date('2026-11-21T12:00:00Z');
/** The back-off waits asked for, recorded instead of slept. */
let waits: number[] = [];
beforeEach(() => {
  waits = [];
});
/** The job as the CLI runs it, direct to the local server, its waits recorded instead of slept. */
const update = (settings: UpdateSettings) =>
  runDataUpdate(settings, {
    now,
    download: createDownload({ timeoutMs: settings.timeoutMs, attempts: settings.attempts, retryDelayMs: settings.retryDelayMs, wait: async (ms) => void waits.push(ms) }),
  });
const outcomes = (results: { source: string; outcome: string }[]) => Object.fromEntries(results.map((r) => [r.source, r.outcome]));

describe('npm run data:update', () => {
  it('fetches every source, validates it, renames it into place, and a broken source fails alone', async () => {
    const report = await update(settingsFrom(env()));
    expect(outcomes(report.results)).toEqual({
      tor: 'updated',
      [`disposable:${base}/disposable-blocklist`]: 'updated',
      [`disposable:${base}/fakefilter`]: 'updated',
      [`proxy:${base}/proxy-list`]: 'updated',
      [`agree:${base}/broad-mailchecker`]: 'updated',
      [`agree:${base}/broad-burner`]: 'updated',
      [`agree:${base}/broad-disposable`]: 'updated',
      [`mx-hosts:${base}/mx-hosts`]: 'updated',
      [`vpn:${base}/vpn-mullvad`]: 'updated',
      [`vpn:${base}/vpn-pia`]: 'updated',
      'cloud:aws': 'updated', 'cloud:google': 'updated', 'cloud:azure': 'updated',
      'cloud:oracle': 'updated', 'cloud:digitalocean': 'updated', 'cloud:cloudflare': 'updated',
      'maxmind:GeoLite2-City': 'updated',
      'maxmind:GeoLite2-ASN': 'failed',
    });
    expect(report.exitCode).toBe(1);
    expect(report.results.find((r) => r.source === 'maxmind:GeoLite2-ASN')?.detail).toMatch(/not a MaxMind DB|truncated|corrupt/);
    expect((await readdir(dir)).sort()).toEqual(['.data-update-status.json', 'GeoLite2-City.mmdb', 'datacenter-ranges.txt', 'disposable-agreed.txt', 'disposable-domains.txt', 'disposable-mx-hosts.txt', 'proxy-list.txt', 'tor-exit-nodes.txt', 'vpn-list.txt']);

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
      // The open proxies, by the address of each `protocol://[user:pass@]host:port` line.
      for (const proxy of ['144.31.222.106', '85.8.47.209', '5.45.119.70', '2a01:4f8:c17:1a2b::2']) {
        expect(inspector.inspect(ip(proxy)).facts.is_proxy, proxy).toBe(true);
      }
      expect(inspector.inspect(ip('81.2.69.1')).facts.is_proxy).toBe(false);
      // A VPN service's server is `true`; an address on no list is still unknown, not clean.
      expect(inspector.inspect(ip('37.19.197.134')).facts.is_vpn).toBe(true);
      expect(inspector.inspect(ip('23.159.216.3')).facts.is_vpn).toBe(true);
      const other = inspector.inspect(ip('81.2.69.1'));
      expect(other.facts.is_vpn).toBeNull();
      expect(other.unavailable).toContain('ip.vpn');
      expect(other.unavailable).not.toContain('ip.proxy');
    } finally {
      await inspector.close();
    }
  });

  it('fetches the throw-away domain lists into disposable-domains.txt, keeping the operator\'s own lines, and the service reads them', async () => {
    await writeFile(join(dir, 'disposable-domains.txt'), '# my own additions\nmy-throwaway.example.org\n');
    const report = await update(settingsFrom(env({ MAXMIND_ACCOUNT_ID: '' })));
    expect(report.results.filter((r) => r.source.startsWith('disposable:')).map((r) => r.detail)).toEqual(['3 domains', '2 domains']);
    const text = await readFile(join(dir, 'disposable-domains.txt'), 'utf8');
    expect(text).toContain('# my own additions\nmy-throwaway.example.org\n');
    expect(text).toContain(`# source: ${base}/fakefilter fetched 2026-11-21T12:00:00.000Z\nwebxio.pro\nanhmaybietchoi.com`);
    const sources = await openEmailSources({ dataDir: dir, reloadIntervalMs: 60_000, logger: capturedLogger().logger });
    try {
      for (const domain of ['webxio.pro', 'throwaway-fixture.net', 'my-throwaway.example.org']) {
        expect(isListedDisposable(domain, sources.current().disposable), domain).toBe(true);
      }
      // Provenance and age for the Data sources page and /metrics: the file, its time, its count.
      expect(sources.status().find((s) => s.name === 'email.disposable.additions')).toMatchObject({ loaded: true, entries: 6, error: null, build_date: expect.any(String) });
    } finally {
      sources.close();
    }
  });

  it.each([
    ['an HTML error page', '/disposable-html', /not a domain list: .*:1: "<!DOCTYPE html>" is not a domain/],
    ['an empty file', '/disposable-empty', /no domains/],
    ['a list of public suffixes', '/disposable-suffixes', /4 of 5 entries are public suffixes/],
  ])('refuses %s from a throw-away list source, and its last good copy keeps serving', async (_what, path, reason) => {
    const previous = [
      '# source: ' + `${base}${path}` + ' fetched 2026-11-01T00:00:00.000Z',
      'last-good.example.net',
    ].join('\n');
    await writeFile(join(dir, 'disposable-domains.txt'), `${previous}\n`);
    const report = await update(settingsFrom(env({ DATA_UPDATE_DISPOSABLE_URLS: `${base}${path},${base}/fakefilter`, MAXMIND_ACCOUNT_ID: '' })));
    const result = report.results.find((r) => r.source === `disposable:${base}${path}`);
    expect(result?.outcome).toBe('failed');
    expect(result?.detail).toMatch(reason);
    expect(result?.detail).toContain('(last good copy kept)');
    expect(report.exitCode).toBe(1);
    const text = await readFile(join(dir, 'disposable-domains.txt'), 'utf8');
    expect(text).toContain(`${previous}\n`);
    expect(text).toContain('\nwebxio.pro\n');
    expect(text).not.toMatch(/<html|\nddns\.net|\nco\.uk/);
  });

  it('refreshes the agree tier: what two broad lists have counts, their mistakes never, and one list alone writes nothing', async () => {
    const report = await update(settingsFrom(env({ MAXMIND_ACCOUNT_ID: '' })));
    expect(report.results.find((r) => r.source === `agree:${base}/broad-burner`)).toMatchObject({ outcome: 'updated', detail: '4 domains; 3 agreed' });
    const text = await readFile(join(dir, 'disposable-agreed.txt'), 'utf8');
    expect(text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual(['0-00.usa.cc', '0-30-24.com', 'agreed-fixture-4821.net']);
    expect(text).toContain(`# source: ${base}/broad-disposable fetched 2026-11-21T12:00:00.000Z (4 domains)`);

    const sources = await openEmailSources({ dataDir: dir, reloadIntervalMs: 60_000, logger: capturedLogger().logger });
    try {
      const listed = (domain: string) => isListedDisposable(domain, sources.current().disposable);
      expect(listed('agreed-fixture-4821.net')).toBe(true);
      expect(listed('only-on-one-4821.net')).toBe(false);
      expect(listed('gmail.com') || listed('zoho.com')).toBe(false);
      expect(sources.status().find((s) => s.name === 'email.disposable.agreed.fetched')).toMatchObject({ loaded: true, entries: 3, error: null });
    } finally {
      sources.close();
    }

    // An error page and one good list: nothing to agree on, the previous file stays.
    const again = await update(settingsFrom(env({ DATA_UPDATE_AGREE_URLS: `${base}/broad-burner,${base}/disposable-html`, MAXMIND_ACCOUNT_ID: '' })));
    expect(again.results.filter((r) => r.source.startsWith('agree:')).map((r) => [r.outcome, r.detail])).toEqual([
      ['failed', '4 domains, but no second list fetched to agree with: disposable-agreed.txt not written'],
      ['failed', expect.stringMatching(/not a domain list/)],
    ]);
    expect(await readFile(join(dir, 'disposable-agreed.txt'), 'utf8')).toBe(text);

    // The default: two independent lists, no aggregate of them. A domain counts only where both list
    // it; with the aggregate, 0-00.usa.cc and agreed-fixture-4821.net (mailchecker's alone) counted.
    expect(settingsFrom({}).agreeLists).toEqual([
      'https://raw.githubusercontent.com/FGRibreau/mailchecker/master/list.txt',
      'https://raw.githubusercontent.com/wesbos/burner-email-providers/master/emails.txt',
    ]);
    await update(settingsFrom(env({ DATA_UPDATE_AGREE_URLS: `${base}/broad-mailchecker,${base}/broad-burner`, MAXMIND_ACCOUNT_ID: '' })));
    const both = await readFile(join(dir, 'disposable-agreed.txt'), 'utf8');
    expect(both.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual(['0-30-24.com']);
  });

  it('fetches the temp-mail services\' mail hosts, refuses a list naming a big provider\'s, and the service never takes one', async () => {
    await writeFile(join(dir, 'disposable-mx-hosts.txt'), '# mine\nmx.my-temp-service.example\n');
    const first = await update(settingsFrom(env({ MAXMIND_ACCOUNT_ID: '' })));
    expect(first.results.find((r) => r.source === `mx-hosts:${base}/mx-hosts`)).toMatchObject({ outcome: 'updated', detail: '4 mail hosts' });
    const good = await readFile(join(dir, 'disposable-mx-hosts.txt'), 'utf8');
    expect(good).toContain(`# mine\nmx.my-temp-service.example\n# source: ${base}/mx-hosts fetched 2026-11-21T12:00:00.000Z\nmohmal.com\ngecicimail.com.tr\nedumail.icu\nmuellmail.com\n`);

    // The poisoned list and an error page are refused; the last good copy stays.
    for (const [path, reason] of [
      ['/mx-hosts-poisoned', /"google\.com" is a big provider's mail host/],
      ['/mx-hosts-shared', /"mx1\.mail\.ovh\.net" is a big provider's mail host \(ovh\.net\)/],
      ['/mx-hosts-html', /not a host name/],
    ] as const) {
      const report = await update(settingsFrom(env({ DATA_UPDATE_MX_HOST_URLS: `${base}${path}`, MAXMIND_ACCOUNT_ID: '' })));
      expect(report.results.find((r) => r.source === `mx-hosts:${base}${path}`)).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(reason) });
      expect(await readFile(join(dir, 'disposable-mx-hosts.txt'), 'utf8')).toBe(good);
    }

    // The service reads them beside the built-in hosts; a big provider's host in the operator's own lines never counts.
    await writeFile(join(dir, 'disposable-mx-hosts.txt'), `${good}# source: hand-written\ngoogle.com\n`);
    const sources = await openEmailSources({ dataDir: dir, reloadIntervalMs: 60_000, logger: capturedLogger().logger });
    try {
      const mx = (exchange: string) => [{ exchange, priority: 10 }];
      const data = sources.current().disposable;
      expect(isDisposable('fresh-brand-4821.com', mx('mx1.gecicimail.com.tr'), data)).toBe(true);
      expect(isDisposable('fresh-brand-4821.com', mx('mx.my-temp-service.example'), data)).toBe(true);
      expect(isDisposable('fresh-brand-4821.com', mx('aspmx.l.google.com'), data)).toBe(false);
      expect(sources.status().find((s) => s.name === 'email.disposable.mx_hosts.additions')).toMatchObject({ loaded: true, entries: 6, error: null });
    } finally {
      sources.close();
    }
  });

  it.each([
    ['an HTML error page', '/proxy-html', /0 addresses and 2 malformed lines: not a range list/],
    ['an empty file', '/proxy-empty', /0 addresses and 0 malformed lines/],
    ['a list with an absurd range', '/proxy-absurd', /"0\.0\.0\.0\/0" is broader than \/16/],
    ['a list with a poisoned IPv4 /8', '/proxy-broad', /"3\.0\.0\.0\/8" is broader than \/16/],
    ['a list with an IPv6 network wider than /32', '/proxy-broad-v6', /"2a01:4f8::\/29" is broader than \/32/],
    ['a list with an IPv4 /0 written as IPv6', '/proxy-mapped', /"::ffff:0\.0\.0\.0\/96" is broader than \/16/],
    ['a list mostly of private space', '/proxy-private', /2 of 3 entries are private or reserved space/],
    ['a list with a range holding documentation space inside it', '/proxy-bogon-inside', /1 of 3 entries are private or reserved space/],
  ])('refuses %s from a proxy list source, and its last good copy keeps serving', async (_what, path, reason) => {
    const previous = `# source: ${base}${path} fetched 2026-11-01T00:00:00.000Z\n45.95.1.1`;
    await writeFile(join(dir, 'proxy-list.txt'), `${previous}\n`);
    const report = await update(settingsFrom(env({ DATA_UPDATE_PROXY_URLS: `${base}${path},${base}/proxy-list`, MAXMIND_ACCOUNT_ID: '' })));
    const result = report.results.find((r) => r.source === `proxy:${base}${path}`);
    expect(result?.outcome).toBe('failed');
    expect(result?.detail).toMatch(reason);
    expect(result?.detail).toContain('(last good copy kept)');
    const text = await readFile(join(dir, 'proxy-list.txt'), 'utf8');
    expect(text).toContain(`${previous}\n`);
    expect(text).toContain('\n85.8.47.198\n');
    expect(text).not.toMatch(/0\.0\.0\.0\/0|192\.168|<html|3\.0\.0\.0\/8|2a01:4f8::\/29|::ffff|198\.51\.0\.0/);
  });

  it('takes proxy and VPN list entries up to an IPv4 /16 and an IPv6 /32', async () => {
    const report = await update(settingsFrom(env({ DATA_UPDATE_PROXY_URLS: `${base}/proxy-at-bounds`, MAXMIND_ACCOUNT_ID: '' })));
    expect(report.results.find((r) => r.source === `proxy:${base}/proxy-at-bounds`)).toMatchObject({ outcome: 'updated', detail: '2 ranges' });
  });

  it('records per source the URL, the last good fetch and its entries, and the last error, keeping the last good fetch through a failure', async () => {
    const proxy = `${base}/proxy-list`;
    await update(settingsFrom(env({ MAXMIND_ACCOUNT_ID: '' })));
    const later = () => new Date('2026-11-22T12:00:00Z');
    await runDataUpdate(settingsFrom(env({ MAXMIND_ACCOUNT_ID: '', DATA_UPDATE_TOR_URL: `${base}/tor-broken`, DATA_UPDATE_VPN_URLS: 'off' })), {
      now: later, download: createDownload({ timeoutMs: 5000, attempts: 1, retryDelayMs: 0 }),
    });
    const status = readStatusFile(dir);
    expect(status.find((s) => s.source === `proxy:${proxy}`)).toEqual({
      source: `proxy:${proxy}`, file: 'proxy-list.txt', url: proxy, last_good_at: '2026-11-22T12:00:00.000Z', entries: 6, last_attempt_at: '2026-11-22T12:00:00.000Z', last_error: null,
    });
    expect(status.find((s) => s.source === 'tor')).toMatchObject({
      url: `${base}/tor-broken`, last_good_at: '2026-11-21T12:00:00.000Z', entries: 3, last_error: expect.stringContaining('not a Tor exit list'),
    });
    // Turned off: no longer reported.
    expect(status.some((s) => s.source.startsWith('vpn:'))).toBe(false);
    // As the service shows them: short names, the URL as the source, the last good fetch as the build date.
    expect(fetchedSourceStatus(dir)().find((s) => s.name === 'ip.fetched.tor')).toEqual({
      name: 'ip.fetched.tor', source: `${base}/tor-broken`, type: 'fetched into tor-exit-nodes.txt', loaded: true,
      build_date: '2026-11-21T12:00:00.000Z', entries: 3, error: expect.stringContaining('not a Tor exit list'),
    });
  });

  it('writes nothing when every throw-away list source fails', async () => {
    await writeFile(join(dir, 'disposable-domains.txt'), 'kept.example.net\n');
    const report = await update(settingsFrom(env({ DATA_UPDATE_DISPOSABLE_URLS: `${base}/disposable-empty,${base}/disposable-html`, MAXMIND_ACCOUNT_ID: '' })));
    expect(report.results.filter((r) => r.source.startsWith('disposable:')).map((r) => r.outcome)).toEqual(['failed', 'failed']);
    expect(await readFile(join(dir, 'disposable-domains.txt'), 'utf8')).toBe('kept.example.net\n');
  });

  it('keeps the previous file when a source serves something that is not its format', async () => {
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '162.247.74.201\n');
    const report = await update(settingsFrom(env({ DATA_UPDATE_TOR_URL: `${base}/tor-broken`, MAXMIND_ACCOUNT_ID: '' })));
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
    const report = await update(settingsFrom(env({ DATA_UPDATE_ORACLE_URL: `${base}/oracle-500`, MAXMIND_LICENSE_KEY: '' })));
    const oracle = report.results.find((r) => r.source === 'cloud:oracle');
    expect(oracle).toMatchObject({ outcome: 'failed', detail: `${base}/oracle-500: HTTP 500, after 3 attempts (previous ranges kept)` });
    const ranges = await readFile(join(dir, 'datacenter-ranges.txt'), 'utf8');
    expect(ranges).toContain('# my own hosting ranges\n198.51.100.0/24\n');
    expect(ranges).toContain('# source: oracle https://old fetched 2026-11-01T00:00:00.000Z\n140.238.0.0/16');
    expect(ranges).not.toContain('52.0.0.0/8'); // aws was refreshed
    expect(ranges.match(/# my own hosting ranges/g)).toHaveLength(1);
    // Running again does not duplicate anything.
    await update(settingsFrom(env({ DATA_UPDATE_ORACLE_URL: `${base}/oracle-500`, MAXMIND_LICENSE_KEY: '' })));
    expect(await readFile(join(dir, 'datacenter-ranges.txt'), 'utf8')).toBe(ranges);
  });

  it('skips the MaxMind databases without an account, without asking for them', async () => {
    const report = await update(settingsFrom(env({ MAXMIND_ACCOUNT_ID: '', MAXMIND_LICENSE_KEY: '' })));
    expect(report.results.filter((r) => r.source.startsWith('maxmind:'))).toEqual([
      { source: 'maxmind:GeoLite2-City', file: 'GeoLite2-City.mmdb', outcome: 'skipped', detail: 'MAXMIND_ACCOUNT_ID and MAXMIND_LICENSE_KEY are not set' },
      { source: 'maxmind:GeoLite2-ASN', file: 'GeoLite2-ASN.mmdb', outcome: 'skipped', detail: 'MAXMIND_ACCOUNT_ID and MAXMIND_LICENSE_KEY are not set' },
    ]);
    expect(report.exitCode).toBe(0);
    expect(origin.requested.some((r) => r.path.startsWith('/geoip/'))).toBe(false);
  });

  it('fails a MaxMind download refused for bad credentials', async () => {
    const report = await update(settingsFrom(env({ MAXMIND_LICENSE_KEY: 'wrong', DATA_UPDATE_MAXMIND_EDITIONS: 'GeoLite2-City' })));
    expect(report.results.find((r) => r.source === 'maxmind:GeoLite2-City')).toMatchObject({ outcome: 'failed', detail: expect.stringContaining('HTTP 401') });
    expect(report.results.find((r) => r.source === 'maxmind:GeoLite2-City')?.detail).not.toContain('wrong');
    // A refused licence key is not retried: another try cannot change it.
    expect(waits).toEqual([]);
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

  it('reads the proxies from the environment (lower case first), and never prints their credentials', () => {
    const settings = settingsFrom({ HTTPS_PROXY: 'http://user:secret@proxy.internal:3128', http_proxy: 'http://a:1', HTTP_PROXY: 'http://b:2', NO_PROXY: '.internal,localhost' });
    expect(settings.proxy).toEqual({ http: 'http://a:1', https: 'http://user:secret@proxy.internal:3128', noProxy: '.internal,localhost' });
    expect(describeProxy(settings.proxy)).toBe('proxy for http a:1, for https proxy.internal:3128, not for .internal,localhost');
    expect(describeProxy(settingsFrom({}).proxy)).toBe('proxy for http none, for https none');
    expect(describeProxy(settingsFrom({ HTTP_PROXY: 'http://p:8080' }).proxy)).toBe('proxy for http p:8080, for https p:8080');
    expect(() => settingsFrom({ HTTPS_PROXY: 'proxy.internal:3128' })).toThrow(/HTTPS_PROXY/);
    expect(() => settingsFrom({ HTTP_PROXY: 'socks5://proxy:1080' })).toThrow(/HTTP_PROXY: must be an http/);
    expect(() => settingsFrom({ DATA_UPDATE_ATTEMPTS: '0' })).toThrow(/DATA_UPDATE_ATTEMPTS/);
  });
});

describe('retries', () => {
  const only = (overrides: Record<string, string>) => settingsFrom(env({ ...overrides, MAXMIND_ACCOUNT_ID: '', ...Object.fromEntries(CLOUD_URLS.map((v) => [v, 'off'])) }));

  it('retries a source the server cannot answer now, backing off, until it answers', async () => {
    const report = await update(only({ DATA_UPDATE_TOR_URL: `${base}/tor-flaky`, DATA_UPDATE_RETRY_DELAY_MS: '1000' }));
    expect(report.results.find((r) => r.source === 'tor')).toMatchObject({ outcome: 'updated', detail: '1 exit addresses' });
    expect(hits('/tor-flaky')).toBe(3);
    // Doubling, with jitter in the upper half of each step.
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(500);
    expect(waits[0]).toBeLessThanOrEqual(1000);
    expect(waits[1]).toBeGreaterThanOrEqual(1000);
    expect(waits[1]).toBeLessThanOrEqual(2000);
  });

  it("waits as long as the server's Retry-After asks", async () => {
    const report = await update(only({ DATA_UPDATE_TOR_URL: `${base}/tor-429`, DATA_UPDATE_RETRY_DELAY_MS: '1000' }));
    expect(report.results.find((r) => r.source === 'tor')?.outcome).toBe('updated');
    expect(waits).toEqual([120_000]);
  });

  it('gives up after DATA_UPDATE_ATTEMPTS, and says so', async () => {
    const report = await update(only({ DATA_UPDATE_TOR_URL: `${base}/oracle-500`, DATA_UPDATE_ATTEMPTS: '4' }));
    expect(report.results.find((r) => r.source === 'tor')?.detail).toBe(`${base}/oracle-500: HTTP 500, after 4 attempts`);
    expect(hits('/oracle-500')).toBe(4);
    expect(waits).toHaveLength(3);
  });

  it('retries a refused connection', async () => {
    const closed = `http://127.0.0.1:${await closedPort()}`;
    const report = await update(only({ DATA_UPDATE_TOR_URL: `${closed}/tor`, DATA_UPDATE_ATTEMPTS: '2' }));
    expect(report.results.find((r) => r.source === 'tor')?.detail).toMatch(/ECONNREFUSED.*, after 2 attempts$/);
    expect(waits).toHaveLength(1);
  });

  it('does not retry what another try cannot change: a 404', async () => {
    const report = await update(only({ DATA_UPDATE_TOR_URL: `${base}/no-such-file` }));
    expect(report.results.find((r) => r.source === 'tor')?.detail).toBe(`${base}/no-such-file: HTTP 404`);
    expect(hits('/no-such-file')).toBe(1);
    expect(waits).toEqual([]);
  });
});
