import type { RangeFormat } from './cloud-ranges.js';

/**
 * What `npm run data:update` fetches, from the environment. Every URL can be replaced (a mirror, a
 * proxy, a test server) or set to `off` to skip that source. This script reads its own variables;
 * the service does not.
 */
export interface CloudSource {
  name: string;
  format: RangeFormat;
  urls: string[];
}

export interface MaxMindSource {
  baseUrl: string;
  accountId: string;
  licenseKey: string;
  editions: string[];
}

/** The proxies of the environment; `null` where none is set. */
export interface ProxySettings {
  http: string | null;
  https: string | null;
  noProxy: string | null;
}

export interface UpdateSettings {
  dataDir: string;
  timeoutMs: number;
  /** Tries per download, the first included. */
  attempts: number;
  /** Wait before the first retry, doubled for each further one. */
  retryDelayMs: number;
  proxy: ProxySettings;
  tor: string | null;
  /** Throw-away domain lists, each enough on its own, merged into `disposable-domains.txt`. */
  disposable: string[];
  /** Open proxy lists (addresses, CIDRs or `host:port`), merged into `proxy-list.txt`: `is_proxy`. */
  proxyLists: string[];
  /**
   * The broad lists of the "agree" tier: the domains two of them list go to `disposable-agreed.txt`.
   * They must be independent of each other (no aggregate of another), or agreement means nothing.
   */
  agreeLists: string[];
  /** Temp-mail services' mail-host domains, merged into `disposable-mx-hosts.txt`. */
  mxHosts: string[];
  /** VPN services' server lists, merged into `vpn-list.txt`: `is_vpn` (a listed address only). */
  vpnLists: string[];
  clouds: CloudSource[];
  /** `null` when no MaxMind account is configured: those databases are skipped, not failed. */
  maxmind: MaxMindSource | null;
  /** Why the MaxMind databases are skipped, if they are. */
  maxmindSkipped: string | null;
  maxmindEditions: string[];
}

export const DEFAULT_URLS = {
  DATA_UPDATE_TOR_URL: 'https://check.torproject.org/torbulkexitlist',
  // The two lists that count alone in the bundled data (docs/data.md, "E-mail lists"), from upstream.
  DATA_UPDATE_DISPOSABLE_URLS: 'https://raw.githubusercontent.com/disposable-email-domains/disposable-email-domains/main/disposable_email_blocklist.conf,https://raw.githubusercontent.com/7c/fakefilter/main/txt/data.txt',
  // Two independent broad lists (docs/data.md): agreement needs both. Not disposable/disposable: it is
  // built from these two and others, so its "agreement" with either is mostly the other's copy.
  DATA_UPDATE_AGREE_URLS: 'https://raw.githubusercontent.com/FGRibreau/mailchecker/master/list.txt,https://raw.githubusercontent.com/wesbos/burner-email-providers/master/emails.txt',
  // The temp-mail services fakefilter watches (BSD-3-Clause), as the mail hosts of the domains they rotate through.
  DATA_UPDATE_MX_HOST_URLS: 'https://raw.githubusercontent.com/7c/fakefilter/main/json/data_version2.json',
  // Open proxies re-checked every hour (MIT, monosans/proxy-list): docs/data.md "Open proxy and VPN lists".
  DATA_UPDATE_PROXY_URLS: 'https://raw.githubusercontent.com/monosans/proxy-list/main/proxies/all.txt',
  // Mullvad's and PIA's own server lists, fetched from the providers daily by X4BNet/lists_vpn (MIT).
  DATA_UPDATE_VPN_URLS: 'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/input/vpn/ips/mullvadvpn.txt,https://raw.githubusercontent.com/X4BNet/lists_vpn/main/input/vpn/ips/pia.txt',
  DATA_UPDATE_AWS_URL: 'https://ip-ranges.amazonaws.com/ip-ranges.json',
  DATA_UPDATE_GOOGLE_URL: 'https://www.gstatic.com/ipranges/cloud.json',
  // A download page linking to this week's ServiceTags_Public_YYYYMMDD.json (a direct JSON URL works too).
  DATA_UPDATE_AZURE_URL: 'https://www.microsoft.com/en-us/download/details.aspx?id=56519',
  DATA_UPDATE_ORACLE_URL: 'https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json',
  DATA_UPDATE_DIGITALOCEAN_URL: 'https://digitalocean.com/geo/google.csv',
  DATA_UPDATE_CLOUDFLARE_URLS: 'https://www.cloudflare.com/ips-v4,https://www.cloudflare.com/ips-v6',
  DATA_UPDATE_MAXMIND_URL: 'https://download.maxmind.com/geoip/databases',
} as const;

type Env = Record<string, string | undefined>;

export class SettingsError extends Error {}

export function settingsFrom(env: Env): UpdateSettings {
  const value = (name: keyof typeof DEFAULT_URLS): string | null => {
    const v = env[name]?.trim() || DEFAULT_URLS[name];
    if (v === 'off') return null;
    for (const url of v.split(',')) {
      if (!/^https?:\/\/\S+$/.test(url.trim())) throw new SettingsError(`${name}: "${url}" is not an http(s) URL`);
    }
    return v;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const n = Number(env[name]?.trim() || String(fallback));
    if (!Number.isInteger(n) || n < min || n > max) throw new SettingsError(`${name}: must be an integer between ${min} and ${max}`);
    return n;
  };
  const urls = (name: keyof typeof DEFAULT_URLS): string[] => value(name)?.split(',').map((u) => u.trim()) ?? [];
  const timeout = integer('DATA_UPDATE_TIMEOUT_MS', 60_000, 100, 3_600_000);
  const cloud = (name: string, format: RangeFormat, variable: keyof typeof DEFAULT_URLS): CloudSource[] => {
    const v = value(variable);
    return v === null ? [] : [{ name, format, urls: v.split(',').map((u) => u.trim()) }];
  };
  const accountId = env.MAXMIND_ACCOUNT_ID?.trim() ?? '';
  const licenseKey = env.MAXMIND_LICENSE_KEY?.trim() ?? '';
  const maxmindUrl = value('DATA_UPDATE_MAXMIND_URL');
  const editions = (env.DATA_UPDATE_MAXMIND_EDITIONS?.trim() || 'GeoLite2-City,GeoLite2-ASN').split(',').map((e) => e.trim());
  for (const e of editions) {
    if (!/^[A-Za-z0-9-]+$/.test(e)) throw new SettingsError(`DATA_UPDATE_MAXMIND_EDITIONS: "${e}" is not an edition id`);
  }
  const maxmind = accountId !== '' && licenseKey !== '' && maxmindUrl !== null
    ? { baseUrl: maxmindUrl.replace(/\/+$/, ''), accountId, licenseKey, editions }
    : null;
  return {
    dataDir: env.DATA_DIR?.trim() || './data',
    timeoutMs: timeout,
    attempts: integer('DATA_UPDATE_ATTEMPTS', 3, 1, 10),
    retryDelayMs: integer('DATA_UPDATE_RETRY_DELAY_MS', 2000, 0, 600_000),
    proxy: proxyFrom(env),
    tor: value('DATA_UPDATE_TOR_URL'),
    disposable: urls('DATA_UPDATE_DISPOSABLE_URLS'),
    proxyLists: urls('DATA_UPDATE_PROXY_URLS'),
    vpnLists: urls('DATA_UPDATE_VPN_URLS'),
    mxHosts: urls('DATA_UPDATE_MX_HOST_URLS'),
    agreeLists: urls('DATA_UPDATE_AGREE_URLS'),
    clouds: [
      ...cloud('aws', 'aws', 'DATA_UPDATE_AWS_URL'),
      ...cloud('google', 'google', 'DATA_UPDATE_GOOGLE_URL'),
      ...cloud('azure', 'azure', 'DATA_UPDATE_AZURE_URL'),
      ...cloud('oracle', 'oracle', 'DATA_UPDATE_ORACLE_URL'),
      ...cloud('digitalocean', 'digitalocean', 'DATA_UPDATE_DIGITALOCEAN_URL'),
      ...cloud('cloudflare', 'text', 'DATA_UPDATE_CLOUDFLARE_URLS'),
    ],
    maxmind,
    maxmindSkipped: maxmind !== null ? null
      : maxmindUrl === null ? 'DATA_UPDATE_MAXMIND_URL is off'
      : 'MAXMIND_ACCOUNT_ID and MAXMIND_LICENSE_KEY are not set',
    maxmindEditions: editions,
  };
}

/**
 * `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`, each also in lower case (which wins, as in curl).
 * A proxy must be an http(s) URL; it may carry credentials (`http://user:pass@proxy:3128`).
 */
function proxyFrom(env: Env): ProxySettings {
  const read = (name: string): string | null => env[name.toLowerCase()]?.trim() || env[name]?.trim() || null;
  const proxyUrl = (name: string): string | null => {
    const value = read(name);
    if (value === null) return null;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new SettingsError(`${name}: not a URL (write http://host:port)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SettingsError(`${name}: must be an http:// or https:// proxy URL`);
    return value;
  };
  return { http: proxyUrl('HTTP_PROXY'), https: proxyUrl('HTTPS_PROXY'), noProxy: read('NO_PROXY') };
}

/**
 * The proxies for the job's output: host and port only, never credentials. Without HTTPS_PROXY,
 * https URLs go through HTTP_PROXY too (undici's EnvHttpProxyAgent), and the line says so.
 */
export function describeProxy(proxy: ProxySettings): string {
  const shown = (value: string | null) => (value === null ? 'none' : new URL(value).host);
  return `proxy for http ${shown(proxy.http)}, for https ${shown(proxy.https ?? proxy.http)}${proxy.noProxy ? `, not for ${proxy.noProxy}` : ''}`;
}
