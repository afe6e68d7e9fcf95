import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { anonymousIpDatabase, anonymousIpRecord, cityDatabase, cityRecord } from '../support/mmdb.js';
import { spellings } from './fixtures.js';

// The IP step through the real app: a listed address in every IPv6 disguise, and data files that lie.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

function directory(prefix: string, files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

const evaluate = (body: object) => t!.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: body });

describe('a City database with a number where a name belongs', () => {
  it('answers 200 with the name unknown: a rule on it does not fire, and nothing throws', async () => {
    const rules = `
rules:
  - id: london_suffix
    name: City name ends in "on"
    score: 30
    when: { field: ip.city, ends_with: "on" }
  - id: country_gb
    name: Country is GB
    score: 10
    when: { field: ip.country_code, equals: GB }
`;
    t = await startTestApp({
      RULES_DIR: directory('risk-rules-', { 'signup.yaml': rules }),
      DATA_DIR: directory('risk-data-', {
        'GeoLite2-City.mmdb': cityDatabase(6, [
          { network: '81.2.69.0/24', data: { country: { iso_code: 'GB', names: { en: 'United Kingdom' } }, city: { names: { en: 42 } } } },
          { network: '81.2.70.0/24', data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'London' }) },
        ]),
      }),
    });
    const lying = await evaluate(evaluationBody({ event_type: 'signup', ip: '81.2.69.160' }));
    expect(lying.statusCode).toBe(200);
    const body = lying.json();
    expect(body.ip).toMatchObject({ country_code: 'GB', city: null });
    expect(body.unavailable).toEqual(expect.arrayContaining(['ip.geo', 'rule:london_suffix', 'rule:country_gb']));
    expect(body.score.details).toEqual([]);

    // The good record beside it still scores.
    const good = (await evaluate(evaluationBody({ event_type: 'signup', ip: '81.2.70.1' }))).json();
    expect(good.score.details.map((d: { rule_name: string }) => d.rule_name)).toEqual(['City name ends in "on"', 'Country is GB']);
    expect(t.logs.lines.filter((l) => l.msg === 'ip data of the wrong type in ip.maxmind.city: the value is unknown, its check unavailable')).toHaveLength(1);
  });
});

describe('a listed IPv4 address inside an IPv6 address', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Every spelling of one client is that client to behaviour history too (one address, many
    // events: ip_velocity): off here, where each spelling's answer is compared with the plain one's.
    app = await startTestApp({
      HISTORY_DAYS: '0',
      DATA_DIR: directory('risk-data-', {
        'tor-exit-nodes.txt': '185.220.101.1\n65.54.227.120\n', // the second is the Teredo server of the spellings
        'proxy-list.txt': '45.95.0.0/16\n',
        'datacenter-ranges.txt': '3.0.0.0/9\n',
        // IPv4-only, as GeoLite2 files for IPv4 are: the IPv4 address is what is looked up.
        'GeoIP2-Anonymous-IP.mmdb': anonymousIpDatabase(4, [{ network: '86.1.0.0/16', data: anonymousIpRecord({ vpn: true }) }]),
        'GeoLite2-City.mmdb': cityDatabase(6, [
          { network: '81.2.69.0/24', data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'London' }) },
          { network: '65.54.227.0/24', data: cityRecord({ countryCode: 'US', country: 'United States', city: 'Redmond' }) },
        ]),
      }),
    });
  });
  afterAll(() => app.app.close());

  const post = async (ip: string) => {
    const response = await app.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ ip }) });
    expect(response.statusCode, ip).toBe(200);
    return response.json();
  };

  const listed = [
    { address: '185.220.101.1', signal: 'ip_tor', fact: 'is_tor', state: 'decline' },
    { address: '45.95.3.4', signal: 'ip_proxy', fact: 'is_proxy', state: 'review' },
    { address: '3.5.6.7', signal: 'ip_datacenter', fact: 'is_datacenter', state: 'review' },
    { address: '86.1.2.3', signal: 'ip_vpn', fact: 'is_vpn', state: 'approve' }, // ip_vpn is off in the shipped rules
  ];
  for (const { address, signal, fact, state } of listed) {
    it(`signals ${signal} for ${address} in every spelling`, async () => {
      for (const { name, text, via } of spellings(address)) {
        const body = await post(text);
        expect(body.ip[fact], `${name}: ${text}`).toBe(true);
        expect(body.signals, `${name}: ${text}`).toContain(signal);
        expect(body.score.state, `${name}: ${text}`).toBe(state);
        if (via !== null) expect(body.ip, `${name}: ${text}`).toMatchObject({ version: 6, embedded_ipv4: address, transition: via });
      }
    });
  }

  it('reads geolocation for the IPv4 client, not for the Teredo relay or the NAT64 prefix, and checks no relay against the lists', async () => {
    for (const { name, text, via } of spellings('81.2.69.160')) {
      const body = await post(text);
      expect(body.ip, name).toMatchObject({ country_code: 'GB', city: 'London', is_tor: false, is_bogon: false, embedded_ipv4: via && '81.2.69.160' });
      expect(body.signals.filter((s: string) => s.startsWith('ip_')), name).toEqual([]);
    }
  });

  it('answers an address that carries none as before', async () => {
    const body = await post('2a02:c7f::1');
    expect(body.ip).toMatchObject({ address: '2a02:c7f::1', version: 6, embedded_ipv4: null, transition: null, is_tor: false, is_bogon: false });
  });
});

describe('out of the box: the bundled ASN data alone', () => {
  it('fires ip_vpn for a VPN service\'s own network, and leaves a home line unknown, not clean', async () => {
    t = await startTestApp({
      HISTORY_DAYS: '0',
      DATA_DIR: directory('risk-data-', {}),
      RULES_DIR: directory('risk-rules-', { 'signup.yaml': 'rules:\n  - library: ip_vpn\n    score: 15\n  - library: ip_datacenter\n    score: 20\n' }),
    });
    // 45.83.220.0/22 is announced by 31173 Services AB (AS39351): Mullvad VPN's servers.
    const vpn = (await evaluate(evaluationBody({ event_type: 'signup', ip: '45.83.221.7' }))).json();
    expect(vpn.ip).toMatchObject({ asn: 39351, is_vpn: true, is_datacenter: false });
    expect(vpn.signals).toContain('ip_vpn');
    expect(vpn.unavailable).not.toContain('ip.vpn');
    expect(vpn.score.fraud_score).toBe(15);

    // Comcast (AS7922): no open source can say it is not a VPN, so the rule is named as not run.
    const home = (await evaluate(evaluationBody({ event_type: 'signup', ip: '73.15.2.9' }))).json();
    expect(home.ip).toMatchObject({ asn: 7922, is_vpn: null, is_datacenter: false });
    expect(home.signals).not.toContain('ip_vpn');
    expect(home.unavailable).toEqual(expect.arrayContaining(['ip.vpn', 'rule:ip_vpn']));
    expect(home.score.fraud_score).toBe(0);
  });
});
