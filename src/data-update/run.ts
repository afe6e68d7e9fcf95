import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDomainList } from '../email/list-file.js';
import { DomainList } from '../email/domain-list.js';
import { MAJOR_MAIL_HOSTS, majorMailHostOf } from '../email/major-mail-hosts.js';
import { NOT_DISPOSABLE } from '../email/not-disposable.js';
import { RELAY_DOMAINS } from '../email/relay.js';
import { isPublicSuffix } from '../email/public-suffix.js';
import { FILE_CAPS } from '../files/caps.js';
import { parseAddressList } from '../ip/lists.js';
import { openMmdb, type MmdbKind } from '../ip/maxmind.js';
import { overlapsBogon } from '../ip/bogon.js';
import { parseNetwork, type IpRange } from '../ip/numeric.js';
import { azureJsonLink, readRanges } from './cloud-ranges.js';
import type { Download } from './fetch.js';
import type { CloudSource, MaxMindSource, UpdateSettings } from './settings.js';
import { redactUrls, shownUrl } from './redact.js';
import { mergeStatus, readStatusFile, writeStatusFile } from './status.js';
import { extractFromTarGz } from './tar.js';
import { replaceAtomically } from './write.js';

export type Outcome = 'updated' | 'failed' | 'skipped';

export interface SourceResult {
  /** E.g. `tor`, `cloud:aws`, `maxmind:GeoLite2-City`. */
  source: string;
  /** The file in `DATA_DIR` it feeds. */
  file: string;
  outcome: Outcome;
  detail: string;
  /** Where it was fetched from, for the status the service shows: no userinfo, no query (redact.ts). */
  url?: string;
  /** Entries in the copy that passed validation. */
  entries?: number;
}

export interface UpdateReport {
  results: SourceResult[];
  /** 0 when nothing failed, 1 when any source failed (the others were still updated). The script exits 2 on bad settings. */
  exitCode: 0 | 1;
}

export const TOR_FILE = 'tor-exit-nodes.txt';
export const DATACENTER_FILE = 'datacenter-ranges.txt';
export const DISPOSABLE_FILE = 'disposable-domains.txt';
export const PROXY_FILE = 'proxy-list.txt';
export const VPN_FILE = 'vpn-list.txt';
export const MX_HOSTS_FILE = 'disposable-mx-hosts.txt';
export const AGREED_FILE = 'disposable-agreed.txt';

export interface UpdateContext {
  /** How each URL is fetched: with the proxy and retries of the settings (fetch.ts). */
  download: Download;
  now?: () => Date;
}

/** Fetches every configured source, validates each, and renames what passed into `DATA_DIR`. */
export async function runDataUpdate(settings: UpdateSettings, context: UpdateContext): Promise<UpdateReport> {
  const { download, now = () => new Date() } = context;
  const fetched = (
    await Promise.all([
      settings.tor === null ? [skipped('tor', TOR_FILE, 'DATA_UPDATE_TOR_URL is off')] : [await updateTor(settings.dataDir, settings.tor, download)],
      updateDatacenterRanges(settings, download, now),
      settings.disposable.length === 0
        ? [skipped('disposable', DISPOSABLE_FILE, 'DATA_UPDATE_DISPOSABLE_URLS is off')]
        : updateSectioned(settings.dataDir, DISPOSABLE_FILE, 'disposable', FILE_CAPS.domainList, settings.disposable.map((url) => ({ url, read: readDisposable })), download, now),
      settings.proxyLists.length === 0
        ? [skipped('proxy', PROXY_FILE, 'DATA_UPDATE_PROXY_URLS is off')]
        : updateSectioned(settings.dataDir, PROXY_FILE, 'proxy', FILE_CAPS.addressList, settings.proxyLists.map((url) => ({ url, read: readRangeList })), download, now),
      settings.vpnLists.length === 0
        ? [skipped('vpn', VPN_FILE, 'DATA_UPDATE_VPN_URLS is off')]
        : updateSectioned(settings.dataDir, VPN_FILE, 'vpn', FILE_CAPS.addressList, settings.vpnLists.map((url) => ({ url, read: readRangeList })), download, now),
      settings.agreeLists.length === 0
        ? [skipped('agree', AGREED_FILE, 'DATA_UPDATE_AGREE_URLS is off')]
        : updateAgreed(settings.dataDir, settings.agreeLists, download, now),
      settings.mxHosts.length === 0
        ? [skipped('mx-hosts', MX_HOSTS_FILE, 'DATA_UPDATE_MX_HOST_URLS is off')]
        : updateSectioned(settings.dataDir, MX_HOSTS_FILE, 'mx-hosts', FILE_CAPS.domainList, settings.mxHosts.map((url) => ({ url, read: readMxHosts })), download, now),
      updateMaxMind(settings, download),
    ])
  ).flat();
  const results = redacted(fetched);
  // What the service shows per source (status.ts); a status that cannot be written fails no source.
  await writeStatusFile(settings.dataDir, mergeStatus(readStatusFile(settings.dataDir), results, now())).catch(() => undefined);
  return { results, exitCode: results.some((r) => r.outcome === 'failed') ? 1 : 0 };
}

/**
 * The results as they are printed, logged and recorded: every URL in a source name, URL or error
 * without its userinfo and query (an operator's mirror may take `user:pass@` or `?token=`), and a
 * `#2` on a name that two URLs differing only there would share.
 */
function redacted(results: SourceResult[]): SourceResult[] {
  const taken = new Set<string>();
  return results.map((r) => {
    const name = redactUrls(r.source);
    let source = name;
    for (let n = 2; taken.has(source); n++) source = `${name}#${n}`;
    taken.add(source);
    return { ...r, source, detail: redactUrls(r.detail), ...(r.url === undefined ? {} : { url: redactUrls(r.url) }) };
  });
}

const skipped = (source: string, file: string, detail: string): SourceResult => ({ source, file, outcome: 'skipped', detail });
const failed = (source: string, file: string, error: unknown): SourceResult => ({
  source, file, outcome: 'failed', detail: (error as Error).message,
});

async function updateTor(dataDir: string, url: string, download: Download): Promise<SourceResult> {
  try {
    const body = (await download(url)).toString('utf8');
    const list = parseAddressList(body);
    // The bulk exit list is clean: more than a few bad lines means we were served something else.
    if (list.entries === 0 || list.malformed > list.entries / 100) {
      throw new Error(`${url}: ${list.entries} addresses and ${list.malformed} malformed lines: not a Tor exit list`);
    }
    await replaceAtomically(dataDir, TOR_FILE, body);
    return { source: 'tor', file: TOR_FILE, outcome: 'updated', detail: `${list.entries} exit addresses`, url, entries: list.entries };
  } catch (error) {
    return { ...failed('tor', TOR_FILE, error), url };
  }
}

/** A provider's CIDRs, validated one by one; throws when the document yields nothing usable. */
async function fetchCloud(cloud: CloudSource, download: Download): Promise<string[]> {
  const cidrs: string[] = [];
  for (const url of cloud.urls) {
    let body = (await download(url)).toString('utf8');
    if (cloud.format === 'azure' && !body.trimStart().startsWith('{')) {
      const link = azureJsonLink(body);
      if (link === null) throw new Error(`${url}: no ServiceTags_Public JSON link on the page`);
      body = (await download(link)).toString('utf8');
    }
    let ranges: string[];
    try {
      ranges = readRanges(cloud.format, body);
    } catch (error) {
      throw new Error(`${url}: not ${cloud.name} ranges: ${(error as Error).message}`);
    }
    const valid = ranges.filter((r) => parseNetwork(r) !== null);
    if (valid.length === 0 || valid.length < ranges.length / 2) {
      throw new Error(`${url}: ${valid.length} valid ranges of ${ranges.length}`);
    }
    cidrs.push(...valid);
  }
  return [...new Set(cidrs)];
}

const SOURCE_MARKER = /^# source: (\S+)/;
const OWN_HEADER = '# data:update:';

/**
 * Splits the current `datacenter-ranges.txt` into the operator's own lines (above the first
 * `# source:` marker) and one section per provider, so a provider that fails this time keeps
 * its previous ranges instead of vanishing from the list.
 */
function sectionsOf(text: string): { own: string[]; sections: Map<string, string[]> } {
  const own: string[] = [];
  const sections = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of text.split('\n')) {
    const marker = SOURCE_MARKER.exec(line);
    if (marker) {
      current = [line];
      sections.set(marker[1]!, current);
    } else if (current) {
      if (line !== '') current.push(line);
    } else if (!line.startsWith(OWN_HEADER) && line !== '') {
      own.push(line);
    }
  }
  return { own, sections };
}

async function updateDatacenterRanges(settings: UpdateSettings, download: Download, now: () => Date): Promise<SourceResult[]> {
  if (settings.clouds.length === 0) return [skipped('cloud', DATACENTER_FILE, 'every DATA_UPDATE_*_URL for clouds is off')];
  const previous = sectionsOf(await readFile(join(settings.dataDir, DATACENTER_FILE), 'utf8').catch(() => ''));
  const fetched = await Promise.all(
    settings.clouds.map(async (cloud) => {
      try {
        return { cloud, cidrs: await fetchCloud(cloud, download), error: null };
      } catch (error) {
        return { cloud, cidrs: null, error };
      }
    }),
  );
  const results: SourceResult[] = [];
  const sections: string[] = [];
  const stamp = now().toISOString();
  for (const { cloud, cidrs, error } of fetched) {
    const source = `cloud:${cloud.name}`;
    if (cidrs) {
      sections.push([`# source: ${cloud.name} ${cloud.urls.map(shownUrl).join(' ')} fetched ${stamp}`, ...cidrs].join('\n'));
      results.push({ source, file: DATACENTER_FILE, outcome: 'updated', detail: `${cidrs.length} ranges`, url: cloud.urls.join(' '), entries: cidrs.length });
    } else {
      const kept = previous.sections.get(cloud.name);
      if (kept) sections.push([redactUrls(kept[0]!), ...kept.slice(1)].join('\n'));
      const detail = `${(error as Error).message}${kept ? ' (previous ranges kept)' : ''}`;
      results.push({ source, file: DATACENTER_FILE, outcome: 'failed', detail, url: cloud.urls.join(' ') });
    }
  }
  if (results.every((r) => r.outcome === 'failed')) return results;
  const text = [
    `${OWN_HEADER} public cloud ranges, written ${stamp}. Lines above the first "# source:" line are yours and are kept.`,
    ...previous.own,
    ...sections,
    '',
  ].join('\n');
  // Each range was checked on its own; the operator's lines are the service's to count, not ours to refuse.
  try {
    if (parseAddressList(text).entries === 0) throw new Error('merged list has no ranges: not written');
    await replaceAtomically(settings.dataDir, DATACENTER_FILE, text);
  } catch (error) {
    return results.map((r) => (r.outcome === 'updated' ? { ...failed(r.source, r.file, error), url: r.url } : r));
  }
  return results;
}

/** A fetched list the checks below accepted: its entries, and what the result line says of it. */
interface ReadList {
  lines: string[];
  detail: string;
}

/**
 * A throw-away domain list as upstream serves it: one domain per line, `#` comments. Refused
 * whole when any line is not a domain (an HTML error page), when it is empty, or when most of its
 * entries are public suffixes (a list of `co.uk`, `ddns.net`… is a mix-up, not throw-away domains);
 * the few public suffixes of a good list are left out, as the service would.
 */
function readDisposable(url: string, body: string): ReadList {
  const parsed = parseDomainList(body, url);
  if ('error' in parsed) throw new Error(`not a domain list: ${parsed.error}`);
  const { size } = parsed.list;
  const suffixes = parsed.publicSuffixes.length;
  if (size === 0 && suffixes === 0) throw new Error(`${url}: no domains`);
  if (suffixes > size) throw new Error(`${url}: ${suffixes} of ${size + suffixes} entries are public suffixes: not a throw-away domain list`);
  const suffixSet = new Set(parsed.publicSuffixes);
  const lines = [...new Set(body.split('\n').map((l) => l.replace(/#.*$/, '').trim().toLowerCase()).filter((l) => l !== '' && !suffixSet.has(l.replace(/^(\*\.|@)/, ''))))];
  return { lines, detail: `${size} domains${suffixes ? ` (${suffixes} public suffixes left out)` : ''}` };
}

const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/**
 * The mail-host domains of temp-mail services: fakefilter's `json/data_version2.json` (the
 * `providers` of every domain it has seen live: the services whose mail hosts sit under their own
 * domain), or a plain list, one host domain a line. Refused whole when it is neither (an error
 * page), when it names nothing, when most entries are public suffixes, or when any entry is a big
 * provider's, a mail gateway's or a shared host's mail host (gmail.com, outlook.com, pphosted.com,
 * ovh.net...: every domain they serve would become throw-away; such a list is wrong, not a little noisy). The few public
 * suffixes of a good list are left out.
 */
function readMxHosts(url: string, body: string): ReadList {
  let candidates: string[];
  if (body.trimStart().startsWith('{')) {
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch (error) {
      throw new Error(`${url}: not JSON: ${(error as Error).message}`);
    }
    const domains = (data as { domains?: unknown }).domains;
    if (domains === null || typeof domains !== 'object') throw new Error(`${url}: no "domains" object: not fakefilter's data_version2.json`);
    // fakefilter writes "static" for domains added by hand: a marker, not a service.
    candidates = Object.values(domains as Record<string, { providers?: unknown }>)
      .flatMap((d) => (Array.isArray(d?.providers) ? d.providers : []))
      .map((p) => String(p).trim().toLowerCase().replace(/\.$/, ''))
      .filter((p) => p !== 'static');
  } else {
    candidates = body.split('\n').map((l) => l.replace(/#.*$/, '').trim().toLowerCase().replace(/\.$/, '')).filter((l) => l !== '');
  }
  const hosts = [...new Set(candidates)];
  const bad = hosts.find((h) => !HOSTNAME.test(h));
  if (bad !== undefined) throw new Error(`${url}: "${bad.slice(0, 60)}" is not a host name: not a mail host list`);
  if (hosts.length === 0) throw new Error(`${url}: no mail hosts`);
  const major = hosts.map((h) => [h, majorMailHostOf(h)] as const).find(([, m]) => m !== null);
  if (major) throw new Error(`${url}: "${major[0]}" is a big provider's mail host (${major[1]}): every domain it serves would be called throw-away`);
  const suffixes = hosts.filter(isPublicSuffix);
  if (suffixes.length > hosts.length / 2) throw new Error(`${url}: ${suffixes.length} of ${hosts.length} entries are public suffixes: not a mail host list`);
  const lines = hosts.filter((h) => !isPublicSuffix(h));
  return { lines, detail: `${lines.length} mail hosts${suffixes.length ? ` (${suffixes.length} public suffixes left out)` : ''}` };
}

/**
 * Broader than this is not a list of proxies or VPN servers but a mistake upstream (or a poisoned
 * copy): the whole list is refused. These lists name servers (the default VPN lists' networks are
 * /26–/32), and a /16 is already 65,536 addresses. A wider entry (`3.0.0.0/8`) would call millions of
 * people's addresses proxies.
 */
const WIDEST_PREFIX = { 4: 16, 6: 32 } as const;

/** The prefix length of a CIDR range, by the range itself (so `::ffff:0.0.0.0/96` is an IPv4 /0). */
function prefixOf(range: IpRange): number {
  if (range.version === 4) return Math.clz32((range.start ^ range.end) >>> 0);
  let bits = 0;
  for (let w = 0; w < 4; w++) {
    const differ = (range.start[w]! ^ range.end[w]!) >>> 0;
    bits += Math.clz32(differ);
    if (differ !== 0) break;
  }
  return bits;
}

/**
 * One entry of an address list as open proxy and VPN lists write them: an address or CIDR, or a
 * proxy as `host:port`, `[v6]:port`, `user:pass@host:port`, any of them after `protocol://`. The
 * address is what is kept (the port and the credentials say nothing of who connects from it);
 * `null` when the line holds no address.
 */
export function addressOfEntry(line: string): { network: string; range: IpRange; bits: number } | null {
  let text = line.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  text = text.slice(text.lastIndexOf('@') + 1);
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/i.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d{1,5}$/.test(text)) text = text.slice(0, text.indexOf(':'));
  const range = parseNetwork(text);
  if (range === null) return null;
  return { network: text, range, bits: prefixOf(range) };
}

/**
 * An open proxy or VPN server list: addresses, CIDRs or `host:port` lines, `#` comments. Refused
 * whole when it is not a list (an HTML error page: more than 1 % of lines are not addresses), when
 * it is empty, when any entry is wider than an IPv4 /16 or an IPv6 /32 (WIDEST_PREFIX: not a list of
 * servers), or when more than 1 % of its entries overlap private, documentation or other reserved
 * space (the publisher listed its own test data; `198.51.0.0/16` counts, for the TEST-NET-2 it
 * holds, though it begins and ends in public space). The few such entries of a good list are left out.
 */
function readRangeList(url: string, body: string): ReadList {
  const lines: string[] = [];
  let malformed = 0;
  let bogons = 0;
  for (const raw of body.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const entry = addressOfEntry(line);
    if (entry === null) {
      malformed++;
      continue;
    }
    if (entry.bits < WIDEST_PREFIX[entry.range.version]) throw new Error(`${url}: "${entry.network}" is broader than /${WIDEST_PREFIX[entry.range.version]}: not a list of servers`);
    if (overlapsBogon(entry.range)) {
      bogons++;
      continue;
    }
    lines.push(entry.network);
  }
  const unique = [...new Set(lines)];
  const total = lines.length + bogons;
  if (lines.length === 0 || malformed > total / 100) {
    throw new Error(`${url}: ${lines.length} addresses and ${malformed} malformed lines: not a range list`);
  }
  if (bogons > total / 100) throw new Error(`${url}: ${bogons} of ${total} entries are private or reserved space: not a list of Internet servers`);
  return { lines: unique, detail: `${unique.length} ranges${bogons ? ` (${bogons} private or reserved left out)` : ''}` };
}

/**
 * Fetches several lists into one `DATA_DIR` file, one `# source: URL fetched TIME` section each,
 * as for the cloud ranges: the operator's lines above the first marker are kept, and a source
 * that fails this time (unreachable, an error page, an empty or nonsensical list) keeps its last
 * good section. Nothing is written when every source failed.
 */
async function updateSectioned(
  dataDir: string,
  file: string,
  kind: string,
  /** The service refuses a bigger file (files/caps.ts): one is not written. */
  cap: number,
  sources: { url: string; read: (url: string, body: string) => ReadList }[],
  download: Download,
  now: () => Date,
): Promise<SourceResult[]> {
  const previous = sectionsOf(await readFile(join(dataDir, file), 'utf8').catch(() => ''));
  const stamp = now().toISOString();
  const fetched = await Promise.all(
    sources.map(async ({ url, read }) => {
      try {
        return { url, list: read(url, (await download(url)).toString('utf8')), error: null };
      } catch (error) {
        return { url, list: null, error };
      }
    }),
  );
  const results: SourceResult[] = [];
  const sections: string[] = [];
  for (const { url, list, error } of fetched) {
    const source = `${kind}:${url}`;
    if (list) {
      sections.push([`# source: ${shownUrl(url)} fetched ${stamp}`, ...list.lines].join('\n'));
      results.push({ source, file, outcome: 'updated', detail: list.detail, url, entries: list.lines.length });
    } else {
      // Sections are named by the URL as shown (no credentials in DATA_DIR either); a file written
      // before that names it as written, and its marker is redacted as it is kept.
      const kept = previous.sections.get(shownUrl(url)) ?? previous.sections.get(url);
      if (kept) sections.push([redactUrls(kept[0]!), ...kept.slice(1)].join('\n'));
      results.push({ source, file, outcome: 'failed', detail: `${(error as Error).message}${kept ? ' (last good copy kept)' : ''}`, url });
    }
  }
  if (results.every((r) => r.outcome === 'failed')) return results;
  const text = [`${OWN_HEADER} ${kind} lists, written ${stamp}. Lines above the first "# source:" line are yours and are kept.`, ...previous.own, ...sections, ''].join('\n');
  try {
    if (Buffer.byteLength(text) > cap) throw new Error(`${file} would be ${Buffer.byteLength(text)} bytes, over the service's cap of ${cap}: not written`);
    await replaceAtomically(dataDir, file, text);
  } catch (error) {
    return results.map((r) => (r.outcome === 'updated' ? failed(r.source, r.file, error) : r));
  }
  return results;
}

/** Never throw-away, whatever two lists say: the curated exceptions, the relays, the big providers. */
const NEVER_AGREED = DomainList.of(NOT_DISPOSABLE, RELAY_DOMAINS, MAJOR_MAIL_HOSTS);

/**
 * The broad throw-away lists of the "agree" tier (each carries a few real providers, so none counts
 * alone), fetched and validated like the lists that count alone; the domains at least two of them
 * list are written to `disposable-agreed.txt`. Only independent lists make agreement mean anything:
 * an aggregate of the others would agree with each of them on all it copied, so the default is two
 * lists compiled apart (settings.ts); the job cannot tell an aggregate from a list, that is the
 * operator's choice of URLs. The service reads the file beside its bundled agreed set. With fewer
 * than two lists fetched this time there is nothing to agree on: the previous file stays. The file
 * is the job's own (no operator lines); its `# source:` lines say what it came from.
 */
async function updateAgreed(dataDir: string, urls: string[], download: Download, now: () => Date): Promise<SourceResult[]> {
  const stamp = now().toISOString();
  const fetched = await Promise.all(urls.map(async (url) => {
    try {
      return { url, list: readDisposable(url, (await download(url)).toString('utf8')), error: null };
    } catch (error) {
      return { url, list: null, error: error as Error };
    }
  }));
  const good = fetched.filter((f) => f.list !== null);
  const failedAgree = (url: string, error: unknown): SourceResult => ({ ...failed(`agree:${url}`, AGREED_FILE, error), url });
  const failedResults = fetched.filter((f) => f.list === null).map((f) => failedAgree(f.url, f.error));
  if (good.length < 2) {
    return [
      ...good.map((f) => failedAgree(f.url, new Error(`${f.list!.detail}, but no second list fetched to agree with: ${AGREED_FILE} not written`))),
      ...failedResults,
    ];
  }
  const seen = new Set<string>();
  const agreed = new Set<string>();
  for (const { list } of good) {
    for (const line of new Set(list!.lines.map((l) => l.replace(/^(\*\.|@)/, '')))) {
      if (seen.has(line)) agreed.add(line);
      else seen.add(line);
    }
  }
  const domains = [...agreed].filter((d) => NEVER_AGREED.match(d) === null).sort();
  const text = [
    `${OWN_HEADER} domains on at least two of ${good.length} broad throw-away lists, written ${stamp}. Rewritten whole by each run.`,
    ...good.map((f) => `# source: ${shownUrl(f.url)} fetched ${stamp} (${f.list!.detail})`),
    ...domains,
    '',
  ].join('\n');
  try {
    if (Buffer.byteLength(text) > FILE_CAPS.domainList) throw new Error(`${AGREED_FILE} would be ${Buffer.byteLength(text)} bytes, over the service's cap of ${FILE_CAPS.domainList}: not written`);
    await replaceAtomically(dataDir, AGREED_FILE, text);
  } catch (error) {
    return [...good.map((f) => failedAgree(f.url, error)), ...failedResults];
  }
  return [
    ...good.map((f) => ({ source: `agree:${f.url}`, file: AGREED_FILE, outcome: 'updated' as const, detail: `${f.list!.detail}; ${domains.length} agreed`, url: f.url, entries: domains.length })),
    ...failedResults,
  ];
}

function kindOf(edition: string): MmdbKind | null {
  if (/City/i.test(edition)) return 'city';
  if (/ASN|ISP/i.test(edition)) return 'asn';
  if (/Anonymous-IP/i.test(edition)) return 'anonymous-ip';
  return null;
}

async function updateMaxMind(settings: UpdateSettings, download: Download): Promise<SourceResult[]> {
  const mm = settings.maxmind;
  if (mm === null) {
    return settings.maxmindEditions.map((e) => skipped(`maxmind:${e}`, `${e}.mmdb`, settings.maxmindSkipped ?? 'not configured'));
  }
  return Promise.all(mm.editions.map((edition) => updateEdition(mm, edition, settings.dataDir, download)));
}

/** https://dev.maxmind.com/geoip/updating-databases/#directly-downloading-databases */
async function updateEdition(mm: MaxMindSource, edition: string, dataDir: string, download: Download): Promise<SourceResult> {
  const source = `maxmind:${edition}`;
  const file = `${edition}.mmdb`;
  try {
    const kind = kindOf(edition);
    if (kind === null) throw new Error(`edition ${edition} is not a City, ASN/ISP or Anonymous-IP database`);
    const auth = Buffer.from(`${mm.accountId}:${mm.licenseKey}`).toString('base64');
    const url = `${mm.baseUrl}/${edition}/download?suffix=tar.gz`;
    const archive = await download(url, { authorization: `Basic ${auth}` });
    let mmdb: Buffer;
    try {
      mmdb = extractFromTarGz(archive, file);
    } catch (error) {
      throw new Error(`${url}: ${(error as Error).message}`);
    }
    const db = await openMmdb(mmdb, kind);
    await replaceAtomically(dataDir, file, mmdb);
    return { source, file, outcome: 'updated', detail: `${db.type} built ${db.buildDate.toISOString()}`, url, entries: db.networks };
  } catch (error) {
    return { ...failed(source, file, error), url: `${mm.baseUrl}/${edition}/download?suffix=tar.gz` };
  }
}
