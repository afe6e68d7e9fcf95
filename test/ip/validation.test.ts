import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Reader } from 'maxmind';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIpInspector, type ReloadingIpInspector } from '../../src/ip/index.js';
import { openMmdb } from '../../src/ip/maxmind.js';
import {
  anonymousIpDatabase, anonymousIpRecord, asnDatabase, asnRecord, cityDatabase, cityRecord, writeMmdb, type MmdbNetwork,
} from '../support/mmdb.js';
import { capturedLogger, configFor, ip, replaceFile, tempDir } from './fixtures.js';

// Data files that pass the format's checks but lie: empty, inconsistent with their metadata, or
// holding values of the wrong type. None may turn into a confident answer.

let dir: string;
let cleanup: () => Promise<void>;
let inspector: ReloadingIpInspector | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await inspector?.close();
  inspector = undefined;
  await cleanup();
});

async function start() {
  const log = capturedLogger();
  inspector = await createIpInspector({ config: configFor(dir), logger: log.logger, openData: null });
  return { inspector, log };
}

const statusOf = (name: string) => inspector!.status().find((s) => s.name === name);

const london = cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'London', latitude: 51.5, longitude: -0.1 });
const cityNetworks: MmdbNetwork[] = [
  { network: '81.2.69.0/24', data: london },
  { network: '2a02:c7f::/32', data: london },
];

describe('a MaxMind database that holds no networks', () => {
  it('is refused at start: the signals it feeds are unavailable, not "not Tor, not VPN"', async () => {
    await writeFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, []));
    const { inspector } = await start();
    expect(statusOf('ip.maxmind.anonymous_ip')).toMatchObject({ loaded: false });
    expect(statusOf('ip.maxmind.anonymous_ip')?.error).toMatch(/holds no networks/);
    const report = inspector.inspect(ip('185.220.101.1'));
    expect(report.facts).toMatchObject({ is_tor: null, is_vpn: null, is_proxy: null, is_datacenter: null });
    expect(report.unavailable).toEqual(expect.arrayContaining(['ip.tor', 'ip.vpn', 'ip.proxy', 'ip.datacenter']));
  });

  it('is refused on reload, for every kind, and the last good copy keeps serving', async () => {
    await writeFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, [{ network: '185.220.101.0/24', data: anonymousIpRecord({ tor: true }) }]));
    await writeFile(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(6, cityNetworks));
    await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(4, [{ network: '81.2.69.0/24', data: asnRecord(20712, 'Andrews & Arnold Ltd') }]));
    const { inspector } = await start();
    await replaceFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, []));
    await replaceFile(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(4, []));
    await replaceFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(6, []));
    await inspector.reload();
    for (const name of ['ip.maxmind.anonymous_ip', 'ip.maxmind.city', 'ip.maxmind.asn']) {
      expect(statusOf(name), name).toMatchObject({ loaded: true, error: expect.stringMatching(/holds no networks/) });
    }
    expect(inspector.inspect(ip('185.220.101.1')).facts.is_tor).toBe(true);
    expect(inspector.inspect(ip('81.2.69.1')).facts).toMatchObject({ city: 'London', asn: 20712 });
  });
});

describe('a MaxMind database whose node_count lies', () => {
  const truth = writeMmdb({ databaseType: 'GeoLite2-City', ipVersion: 6, networks: cityNetworks });
  const { nodeCount } = new Reader(truth).metadata;

  it('is read whole when it tells the truth', async () => {
    expect((await openMmdb(truth, 'city')).networks).toBe(2);
  });

  for (const lie of [1, nodeCount - 1, nodeCount + 1, nodeCount * 2, nodeCount + 100_000]) {
    it(`is refused, never served as a database that finds nothing (node_count ${lie} for ${nodeCount} nodes)`, async () => {
      await writeFile(join(dir, 'GeoLite2-City.mmdb'), writeMmdb({ databaseType: 'GeoLite2-City', ipVersion: 6, networks: cityNetworks, nodeCount: lie }));
      const { inspector } = await start();
      expect(statusOf('ip.maxmind.city')).toMatchObject({ loaded: false, error: expect.stringMatching(/node_count|corrupt|truncated|MaxMind DB/) });
      const report = inspector.inspect(ip('81.2.69.1'));
      expect(report.facts.city).toBeNull();
      expect(report.unavailable).toContain('ip.geo');
    });
  }
});

describe('a MaxMind search tree inconsistent with itself', () => {
  /** A single /32: a chain of 32 nodes (numbered breadth first, 24-bit records, 6 bytes a node). */
  const chain = () => writeMmdb({ databaseType: 'GeoLite2-ASN', ipVersion: 4, recordSize: 24, networks: [{ network: '1.2.3.4/32', data: asnRecord(1, 'x') }] });
  const nodeCount = 32;

  it('is refused when a record points into the separator or past the data section', async () => {
    for (const value of [nodeCount + 1, nodeCount + 15, nodeCount + 16 + 10_000]) {
      const bad = chain();
      bad.writeUIntBE(value, 0, 3); // the root's left record: 0.0.0.0/1
      await expect(openMmdb(bad, 'asn'), String(value)).rejects.toThrow(/corrupt search tree: node 0 points to .* outside the data section/);
    }
  });

  it('is refused when a path is longer than an address', async () => {
    const bad = chain();
    // The last node of the chain (depth 31) holds the /32's record on one side and "no data" on
    // the other: point that one at another node.
    const last = (nodeCount - 1) * 6;
    const side = bad.readUIntBE(last, 3) === nodeCount ? 0 : 3;
    bad.writeUIntBE(5, last + side, 3);
    await expect(openMmdb(bad, 'asn')).rejects.toThrow(/deeper than a 32-bit address/);
  });

  it('is refused when the records the walk finds do not decode, though no probe address reaches them', async () => {
    const good = anonymousIpDatabase(6, [{ network: '185.220.101.0/24', data: anonymousIpRecord({ tor: true }) }]);
    const bad = Buffer.from(good);
    const record = bad.indexOf(Buffer.from('is_anonymous')) - 2; // the map's control byte, then the key's
    bad[record] = 0x00;
    bad[record + 1] = 0xf0; // an unknown extended type
    await expect(openMmdb(bad, 'anonymous-ip')).rejects.toThrow(/corrupt: look-up of .* failed/);
  });
});

describe('values of the wrong type in a database that loads', () => {
  it('read as null and report their check as unavailable, once in the log', async () => {
    await writeFile(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(6, [
      { network: '81.2.69.0/24', data: { country: { iso_code: 'GB', names: { en: 'United Kingdom' } }, city: { names: { en: 42 } } } },
      { network: '81.2.70.0/24', data: { country: { iso_code: 'GB', names: 'United Kingdom' }, location: { latitude: 'north', longitude: 200 } } },
      { network: '81.2.71.0/24', data: london },
    ]));
    await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(6, [
      { network: '81.2.69.0/24', data: { autonomous_system_number: '20712', autonomous_system_organization: 'A&A' } },
      { network: '81.2.70.0/24', data: { autonomous_system_number: 2.5, autonomous_system_organization: 'Half' } },
      { network: '81.2.71.0/24', data: asnRecord(20712, 'Andrews & Arnold Ltd') },
    ]));
    const { inspector, log } = await start();

    const wrongCity = inspector.inspect(ip('81.2.69.1'));
    expect(wrongCity.facts).toMatchObject({ country_code: 'GB', country: 'United Kingdom', city: null, asn: null, as_organization: 'A&A' });
    expect(wrongCity.unavailable).toEqual(expect.arrayContaining(['ip.geo', 'ip.asn', 'ip.datacenter']));

    const wrongNames = inspector.inspect(ip('81.2.70.1'));
    expect(wrongNames.facts).toMatchObject({ country_code: 'GB', country: null, latitude: null, longitude: null, asn: null });
    expect(wrongNames.unavailable).toEqual(expect.arrayContaining(['ip.geo', 'ip.asn']));

    // A good record in the same files answers as usual.
    const good = inspector.inspect(ip('81.2.71.1'));
    expect(good.facts).toMatchObject({ city: 'London', asn: 20712, is_datacenter: false });
    expect(good.unavailable).not.toContain('ip.geo');
    expect(good.unavailable).not.toContain('ip.asn');

    const logged = log.lines().filter((l) => String(l.msg).startsWith('ip data of the wrong type'));
    expect(logged.map((l) => [l.source, l.err])).toEqual([
      ['ip.maxmind.city', 'city.names.en is the number 42, not text'],
      ['ip.maxmind.asn', 'autonomous_system_number is text, not an integer from 0 to 4294967295'],
    ]);
  });

  it('leave an anonymity signal unknown, not false, unless another source says true', async () => {
    await writeFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, [
      { network: '185.220.101.0/24', data: { is_anonymous: true, is_tor_exit_node: 'yes', is_anonymous_vpn: 1 } },
      { network: '185.220.102.0/24', data: { is_anonymous: true, is_tor_exit_node: 'yes' } },
    ]));
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '185.220.102.7\n');
    const { inspector } = await start();
    const unknown = inspector.inspect(ip('185.220.101.1'));
    expect(unknown.facts).toMatchObject({ is_tor: null, is_vpn: null, is_proxy: false, is_datacenter: false });
    expect(unknown.unavailable).toEqual(expect.arrayContaining(['ip.tor', 'ip.vpn']));
    // The Tor list says true: that stands, whatever the garbled flag.
    expect(inspector.inspect(ip('185.220.102.7')).facts.is_tor).toBe(true);
  });
});
