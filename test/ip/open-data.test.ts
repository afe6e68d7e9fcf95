import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIpInspector, type ReloadingIpInspector } from '../../src/ip/index.js';
import { buildDateOfVersion, countryName } from '../../src/ip/open-data.js';
import { capturedLogger, configFor, ip, tempDir } from './fixtures.js';

describe('the bundled open data, out of the box', () => {
  let inspector: ReloadingIpInspector;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const temp = await tempDir();
    cleanup = temp.cleanup;
    // No openData option: what a fresh `npm ci` gives, with an empty DATA_DIR.
    inspector = await createIpInspector({ config: configFor(temp.dir), logger: capturedLogger().logger });
  });
  afterAll(async () => {
    await inspector.close();
    await cleanup();
  });

  it('knows the country and ASN of public addresses and flags data centers by ASN', () => {
    expect(inspector.inspect(ip('8.8.8.8')).facts).toMatchObject({
      country_code: 'US', country: 'United States', asn: 15169, as_organization: 'Google LLC', is_datacenter: true,
    });
    expect(inspector.inspect(ip('2001:4860:4860::8888')).facts).toMatchObject({ asn: 15169, is_datacenter: true });
    expect(inspector.inspect(ip('::ffff:8.8.8.8')).facts).toMatchObject({ address: '8.8.8.8', asn: 15169 });
  });

  it('flags a VPN service\'s own network as VPN, and leaves a home line unknown rather than clean', () => {
    // 45.83.220.0/22 and 2a03:1b20::/48: announced by 31173 Services AB (AS39351), Mullvad VPN's network.
    const mullvad = inspector.inspect(ip('45.83.221.7'));
    expect(mullvad.facts).toMatchObject({ asn: 39351, is_vpn: true });
    expect(mullvad.unavailable).not.toContain('ip.vpn');
    expect(inspector.inspect(ip('2a03:1b20:1::1')).facts).toMatchObject({ asn: 39351, is_vpn: true });
    // Comcast (AS7922): not hosting, and no open source can say it is not a VPN.
    const home = inspector.inspect(ip('73.15.2.9'));
    expect(home.facts).toMatchObject({ asn: 7922, is_datacenter: false, is_vpn: null });
    expect(home.unavailable).toContain('ip.vpn');
  });

  it('shows where the data came from and when it was built', () => {
    const open = inspector.status().filter((s) => s.name.startsWith('ip.open.'));
    expect(open.map((s) => [s.name, s.loaded, s.error])).toEqual([['ip.open.country', true, null], ['ip.open.asn', true, null]]);
    for (const s of open) {
      expect(s.source).toMatch(/^@ip-location-db\/(dbip-country-mmdb|asn)@2\.3\.\d{10}$/);
      expect(s.build_date).toMatch(/^20\d\d-\d\d-\d\dT/);
      expect(s.entries).toBeGreaterThan(100_000);
    }
  });
});

describe('open data helpers', () => {
  it('reads the build date from the package version', () => {
    expect(buildDateOfVersion('2.3.2026061719')?.toISOString()).toBe('2026-06-17T19:00:00.000Z');
    expect(buildDateOfVersion('1.0.0')).toBeNull();
  });

  it('names countries from their ISO code, and not codes it does not know', () => {
    expect(countryName('GB')).toBe('United Kingdom');
    expect(countryName('ZZ')).toBeNull();
    expect(countryName('gb')).toBeNull();
  });
});
