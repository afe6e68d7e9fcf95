import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asnDatabase, asnRecord, cityDatabase, cityRecord } from '../support/mmdb.js';
import { tarGz } from '../support/tar.js';

/**
 * The public sources of `data:update`, served from 127.0.0.1 by the test: fixture files as the
 * real sources serve them (trimmed), plus broken and flaky ones.
 */

export const MAXMIND_ACCOUNT = { MAXMIND_ACCOUNT_ID: '12345', MAXMIND_LICENSE_KEY: 'secret-key' };
const AUTH = `Basic ${Buffer.from(`${MAXMIND_ACCOUNT.MAXMIND_ACCOUNT_ID}:${MAXMIND_ACCOUNT.MAXMIND_LICENSE_KEY}`).toString('base64')}`;

export interface Origin {
  base: string;
  /** Every request, in order: its path, and whether it came through a proxy (a `Via` header). */
  requested: Array<{ path: string; via: string | undefined }>;
  /** How many times a path was asked for so far. */
  hits(path: string): number;
  close(): Promise<void>;
}

export const CLOUD_URLS = ['DATA_UPDATE_AWS_URL', 'DATA_UPDATE_GOOGLE_URL', 'DATA_UPDATE_AZURE_URL', 'DATA_UPDATE_ORACLE_URL', 'DATA_UPDATE_DIGITALOCEAN_URL', 'DATA_UPDATE_CLOUDFLARE_URLS'];

/** Every source pointed at the origin; nothing leaves 127.0.0.1. */
export function sourcesAt(base: string): Record<string, string> {
  return {
    DATA_UPDATE_TOR_URL: `${base}/tor`,
    DATA_UPDATE_DISPOSABLE_URLS: `${base}/disposable-blocklist,${base}/fakefilter`,
    DATA_UPDATE_PROXY_URLS: `${base}/proxy-list`,
    DATA_UPDATE_AGREE_URLS: `${base}/broad-mailchecker,${base}/broad-burner,${base}/broad-disposable`,
    DATA_UPDATE_MX_HOST_URLS: `${base}/mx-hosts`,
    DATA_UPDATE_VPN_URLS: `${base}/vpn-mullvad,${base}/vpn-pia`,
    DATA_UPDATE_AWS_URL: `${base}/aws.json`,
    DATA_UPDATE_GOOGLE_URL: `${base}/google.json`,
    DATA_UPDATE_AZURE_URL: `${base}/azure`,
    DATA_UPDATE_ORACLE_URL: `${base}/oracle.json`,
    DATA_UPDATE_DIGITALOCEAN_URL: `${base}/do.csv`,
    DATA_UPDATE_CLOUDFLARE_URLS: `${base}/cf-v4,${base}/cf-v6`,
    DATA_UPDATE_MAXMIND_URL: `${base}/geoip/databases`,
    ...MAXMIND_ACCOUNT,
  };
}

export async function startOrigin(): Promise<Origin> {
  const requested: Origin['requested'] = [];
  const hits = (path: string) => requested.filter((r) => r.path === path).length;
  let base = '';
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/tor': (_q, res) => res.end('185.220.101.1\n185.220.101.2\n2a0b:f4c2::1\n'),
    '/tor-broken': (_q, res) => res.end('<!doctype html>\n<html><body>Service Unavailable</body></html>\n'),
    // Unavailable twice, then the list: a source that a retry gets.
    '/tor-flaky': (_q, res) => {
      if (hits('/tor-flaky') <= 2) {
        res.statusCode = 503;
        return void res.end('try later');
      }
      res.end('185.220.101.1\n');
    },
    '/tor-429': (_q, res) => {
      if (hits('/tor-429') === 1) {
        res.writeHead(429, { 'retry-after': '120' });
        return void res.end();
      }
      res.end('185.220.101.1\n');
    },
    // Throw-away domain lists as upstream serves them (trimmed), and three that must be refused.
    '/disposable-blocklist': (_q, res) => res.end('0-mail.com\n10minutemail.co.za\nthrowaway-fixture.net\n'),
    '/fakefilter': (_q, res) => res.end('# Fake and Temp Mail Providers\n# https://github.com/7c/fakefilter\n# Last Update: 2026-11-20T00:14:44.419Z\nwebxio.pro\nanhmaybietchoi.com\n'),
    '/disposable-html': (_q, res) => res.end('<!DOCTYPE html>\n<html><head><title>429 Too Many Requests</title></head><body>Slow down</body></html>\n'),
    '/disposable-empty': (_q, res) => res.end(''),
    '/disposable-suffixes': (_q, res) => res.end('co.uk\nddns.net\ncom.au\nblogspot.com\nthrowaway-fixture.net\n'),
    // An open proxy list as monosans/proxy-list's all.txt is (recorded, trimmed; one line with
    // credentials and one IPv6 proxy added, as its README says a line may be).
    '/proxy-list': (_q, res) => res.end('socks4://144.31.222.106:7890\nhttp://85.8.47.198:7080\nhttp://85.8.47.209:7080\nsocks5://185.128.104.152:8443\nhttp://user:pass@5.45.119.70:1080\nsocks5://[2a01:4f8:c17:1a2b::2]:1080\n'),
    // Refused proxy lists: absurd breadth, mostly private space, an error page, nothing.
    '/proxy-absurd': (_q, res) => res.end('85.8.47.198\n0.0.0.0/0\n'),
    '/proxy-private': (_q, res) => res.end('http://192.168.1.10:8080\nhttp://10.0.0.3:3128\nhttp://85.8.47.198:7080\n'),
    '/proxy-html': (_q, res) => res.end('<!DOCTYPE html>\n<html><head><title>503</title></head><body>Unavailable</body></html>\n'),
    '/proxy-empty': (_q, res) => res.end('\n'),
    // Poisoned copies of the recorded list: one entry each that would list millions of addresses
    // (an IPv4 /8, an IPv6 /29, an IPv4 /0 written as IPv4-mapped IPv6), or that holds documentation
    // space while beginning and ending in public space (198.51.0.0/16 holds TEST-NET-2).
    '/proxy-broad': (_q, res) => res.end('http://85.8.47.198:7080\nhttp://85.8.47.209:7080\n3.0.0.0/8\n'),
    '/proxy-broad-v6': (_q, res) => res.end('http://85.8.47.198:7080\nsocks5://[2a01:4f8:c17:1a2b::2]:1080\n2a01:4f8::/29\n'),
    '/proxy-mapped': (_q, res) => res.end('http://85.8.47.198:7080\n::ffff:0.0.0.0/96\n'),
    '/proxy-bogon-inside': (_q, res) => res.end('http://85.8.47.198:7080\nhttp://85.8.47.209:7080\n198.51.0.0/16\n'),
    // The widest entries a server list may hold: an IPv4 /16, an IPv6 /32.
    '/proxy-at-bounds': (_q, res) => res.end('85.8.0.0/16\n2a01:4f8::/32\n'),
    // The broad lists of the "agree" tier (recorded, trimmed, plus fixtures): a domain counts where two
    // list it; gmail.com and zoho.com, on two of them, are the kind of mistake they carry.
    '/broad-mailchecker': (_q, res) => res.end('0-00.usa.cc\n0-30-24.com\nagreed-fixture-4821.net\nonly-on-one-4821.net\ngmail.com\nzoho.com\n'),
    '/broad-burner': (_q, res) => res.end('0-30-24.com\n0-attorney.com\ngmail.com\nzoho.com\n'),
    '/broad-disposable': (_q, res) => res.end('0-00.usa.cc\n0-30-24.com\n000webmail.ddnss.de\nagreed-fixture-4821.net\n'),
    // fakefilter's json/data_version2.json (recorded, trimmed): the providers are the services' mail hosts.
    '/mx-hosts': (_q, res) => res.end(JSON.stringify({ version: 2, t: 1771373684, domains: {
      'webxio.pro': { providers: ['mohmal.com'], hosts: { 'webxio.pro': { firstseen: 1762130000, lastseen: 1771370000 } } },
      'justatemp.com': { providers: ['static'], hosts: { 'justatemp.com': { firstseen: 1732400000, lastseen: 1771370000 } } },
      'maildeck.org': { providers: ['gecicimail.com.tr'], hosts: { 'maildeck.org': { firstseen: 1770330000, lastseen: 1771370000 } } },
      'edu-fixture.icu': { providers: ['edumail.icu', 'muellmail.com'], hosts: { 'edu-fixture.icu': { firstseen: 1770330000, lastseen: 1771370000 } } },
    } })),
    // The same with one poisoned entry: a big provider's mail host would make every Workspace domain throw-away.
    '/mx-hosts-poisoned': (_q, res) => res.end(JSON.stringify({ version: 2, domains: {
      'webxio.pro': { providers: ['mohmal.com'] },
      'evil.example': { providers: ['muellmail.com', 'google.com'] },
    } })),
    // A plain list of mail hosts with a shared host's in it: OVHcloud's MX serves its customers' domains.
    '/mx-hosts-shared': (_q, res) => res.end('mohmal.com\nmx1.mail.ovh.net\n'),
    '/mx-hosts-html': (_q, res) => res.end('<!DOCTYPE html>\n<html><body>rate limited</body></html>\n'),
    // VPN services' server lists as X4BNet/lists_vpn keeps them (input/vpn/ips/*.txt, recorded, trimmed).
    '/vpn-mullvad': (_q, res) => res.end('23.144.160.67/32\n23.144.160.86/32\n23.159.216.3/32\n'),
    '/vpn-pia': (_q, res) => res.end('31.171.155.134/31\n31.171.155.143/32\n37.19.197.132/30\n'),
    '/aws.json': (_q, res) => res.end(JSON.stringify({
      syncToken: '1', prefixes: [{ ip_prefix: '3.0.0.0/9', region: 'us-east-1', service: 'AMAZON' }],
      ipv6_prefixes: [{ ipv6_prefix: '2600:1f00::/24', region: 'us-east-1', service: 'AMAZON' }],
    })),
    '/google.json': (_q, res) => res.end(JSON.stringify({
      prefixes: [{ ipv4Prefix: '34.64.0.0/10', service: 'Google Cloud' }, { ipv6Prefix: '2600:1900::/28', service: 'Google Cloud' }],
    })),
    '/azure': (_q, res) => res.end(`<html><a href="${base}/download/ServiceTags_Public_20261116.json">Download</a></html>`),
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
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', base).pathname;
    requested.push({ path, via: req.headers.via });
    const route = routes[path];
    if (route) route(req, res);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, requested, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
