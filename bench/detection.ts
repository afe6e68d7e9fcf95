/**
 * Detection quality of the e-mail lists, and what the curated IP ASN lists flag (benchIpAsnLists,
 * below): `npm run bench:detection` (also the first thing
 * `npm run bench` prints). No network, no DNS: the labelled set is built from devDependencies
 * (their versions are printed) and the project's own fixture; the service's answer is the list
 * check `POST /v1/risk/evaluate` makes before any DNS (`isListedDisposable`, the free-provider list).
 *
 * The labelled set (sources and why in docs/data.md, "Measuring detection"):
 * - disposable positives: domains on at least two of four maintained throw-away lists the service
 *   does NOT bundle (disposable-email-domains, fakefilter, @dahoom/disposable-email, freemail's
 *   disposable.txt), less the negatives, the relays and the project's verified exceptions;
 * - negatives: test/email/fixtures/top-mail-domains.txt (consumer providers and organisations,
 *   none may ever be disposable) and the relay domains;
 * - free-provider positives: freemail's free.txt less every domain any throw-away list (bundled
 *   or not) carries, the organisations and entries under no known public suffix or under `.edu`,
 *   `.gov`, `.mil` (`australia.edu` is a vanity domain, but such a domain is never called free), plus the fixture's consumer section; free-provider
 *   negatives: the fixture's business section (companies, universities, public bodies) and the
 *   placeholders and companies the project corrects (example.com, facebook.com, bt.com…).
 *
 * Prints precision and recall; the exit code is 1 when a negative is called disposable or an
 * organisation free (precision must stay at 100 %).
 */
import './temp-root.js';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { parse } from 'tldts';
import { isListedDisposable } from '../src/email/disposable.js';
import { NOT_FREE_PROVIDERS } from '../src/email/free-providers.js';
import { normalizeAll } from '../src/email/list-file.js';
import { NOT_DISPOSABLE } from '../src/email/not-disposable.js';
import { RELAY_DOMAINS } from '../src/email/relay.js';
import { openEmailSources } from '../src/email/sources.js';
import { HOSTING_ASNS } from '../src/ip/hosting-asns.js';
import { VPN_ASNS } from '../src/ip/vpn-asns.js';
import { TOP_MAIL_DOMAINS } from '../test/email/fixtures/top-mail-domains.js';

const require = createRequire(import.meta.url);
const version = (pkg: string): string => (require(`${pkg}/package.json`) as { version: string }).version;
const text = (pkg: string, file: string): string => readFileSync(require.resolve(`${pkg}/${file}`), 'utf8');
const lines = (pkg: string, file: string): string[] => normalizeAll(text(pkg, file).split('\n').filter((l) => !l.startsWith('#')));
const json = (pkg: string, file: string): string[] => normalizeAll(JSON.parse(text(pkg, file)) as string[]);

/** The evaluation lists: none is bundled by the service (docs/data.md says why). */
function evaluationLists(): { name: string; domains: Set<string> }[] {
  return [
    { name: `disposable-email-domains@${version('disposable-email-domains')}`, domains: new Set(json('disposable-email-domains', 'index.json')) },
    { name: `fakefilter@${version('fakefilter')}`, domains: new Set(lines('fakefilter', 'txt/data.txt')) },
    { name: `@dahoom/disposable-email@${version('@dahoom/disposable-email')}`, domains: new Set(json('@dahoom/disposable-email', 'domains.json')) },
    { name: `freemail@${version('freemail')} disposable.txt`, domains: new Set(lines('freemail', 'data/disposable.txt')) },
  ];
}

/** Bundled throw-away lists, read raw (before the project's exceptions) to leave their domains out of the free positives. */
function bundledRaw(): string[] {
  return [
    ...json('disposable-domains', 'index.json'),
    ...json('disposable-email-domains-js', 'dist/dict/disposable_email_blocklist.json'),
    ...lines('burner-email-providers', 'emails.txt'),
    ...normalizeAll((require('mailchecker/platform/node') as { blacklist(): Set<string> }).blacklist()),
  ];
}

/** freemail's free.txt carries typos of suffixes (`check.com12`, `email.tst`): those are no one's provider. */
function knownSuffix(domain: string): boolean {
  const parsed = parse(domain, { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false });
  return parsed.isIcann === true || parsed.isPrivate === true;
}

export interface DetectionSet {
  disposable: string[];
  /** The positives no bundled list carries (before the project's exceptions): what more sources must catch. */
  unbundled: string[];
  notDisposable: string[];
  free: string[];
  notFree: string[];
  sources: string[];
}

export function detectionSet(): DetectionSet {
  const lists = evaluationLists();
  const relays = RELAY_DOMAINS;
  const legit = new Set([...TOP_MAIL_DOMAINS.all, ...relays, ...NOT_DISPOSABLE]);
  const votes = new Map<string, number>();
  for (const l of lists) for (const d of l.domains) votes.set(d, (votes.get(d) ?? 0) + 1);
  const disposable = [...votes].filter(([d, n]) => n >= 2 && !legit.has(d)).map(([d]) => d).sort();

  const anyThrowAway = new Set([...bundledRaw(), ...lists.flatMap((l) => [...l.domains])]);
  const business = new Set(TOP_MAIL_DOMAINS.business);
  const notFree = [...new Set([...TOP_MAIL_DOMAINS.business, ...NOT_FREE_PROVIDERS, 'example.com', 'example.org', 'nus.edu.sg'])].sort();
  const notFreeSet = new Set(notFree);
  const free = [...new Set([...lines('freemail', 'data/free.txt'), ...TOP_MAIL_DOMAINS.consumer])]
    .filter((d) => knownSuffix(d) && !/\.(edu|gov|mil)$/.test(d))
    .filter((d) => (!anyThrowAway.has(d) || TOP_MAIL_DOMAINS.consumer.includes(d)) && !business.has(d) && !notFreeSet.has(d))
    .sort();
  const bundled = new Set(bundledRaw());
  return {
    disposable,
    unbundled: disposable.filter((d) => !bundled.has(d)),
    notDisposable: [...legit].sort(),
    free,
    notFree,
    sources: [...lists.map((l) => l.name), `freemail@${version('freemail')} free.txt`, 'test/email/fixtures/top-mail-domains.txt', 'src/email/relay.ts'],
  };
}

const pct = (n: number, of: number): string => `${((100 * n) / Math.max(of, 1)).toFixed(1)} % (${n.toLocaleString('en')} of ${of.toLocaleString('en')})`;

export async function benchDetection(): Promise<boolean> {
  const set = detectionSet();
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-detection-'));
  const sources = await openEmailSources({ dataDir, reloadIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
  try {
    const data = sources.current();
    const disposable = (d: string) => isListedDisposable(d, data.disposable);
    const free = (d: string) => data.freeProviders.has(d);
    const caught = set.disposable.filter(disposable);
    const wrongDisposable = set.notDisposable.filter(disposable);
    const freeCaught = set.free.filter(free);
    const wrongFree = set.notFree.filter(free);
    const missed = set.free.filter((d) => !free(d));

    console.log('detection (list checks, no DNS); the labelled set from:');
    for (const s of set.sources) console.log(`  ${s}`);
    console.log(`disposable: recall ${pct(caught.length, set.disposable.length)}`);
    console.log(`  of those no bundled list has: ${pct(set.unbundled.filter(disposable).length, set.unbundled.length)}`);
    console.log(`  legitimate domains and relays called disposable: ${pct(wrongDisposable.length, set.notDisposable.length)}${wrongDisposable.length ? ` ${wrongDisposable.join(', ')}` : ''}`);
    console.log(`  precision ${pct(caught.length, caught.length + wrongDisposable.length)}`);
    console.log(`free_provider: recall ${pct(freeCaught.length, set.free.length)}`);
    console.log(`  organisations and placeholders called free: ${pct(wrongFree.length, set.notFree.length)}${wrongFree.length ? ` ${wrongFree.join(', ')}` : ''}`);
    console.log(`  precision ${pct(freeCaught.length, freeCaught.length + wrongFree.length)}`);
    if (process.env.BENCH_DETECTION_MISSED) console.log(`  missed: ${missed.join(' ')}`);
    return wrongDisposable.length === 0 && wrongFree.length === 0;
  } finally {
    sources.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * Access networks (home lines, mobile carriers) and relays whose egress carries real people: none
 * may be on the curated hosting or VPN-service ASN lists. Cloudflare (WARP), Akamai and Fastly
 * (iCloud Private Relay) and Apple are here because they are left out of both on purpose.
 */
const ACCESS_NETWORKS: ReadonlyMap<number, string> = new Map([
  [7922, 'Comcast'], [7018, 'AT&T'], [701, 'Verizon'], [20115, 'Charter'], [21928, 'T-Mobile US'], [22773, 'Cox'],
  [3320, 'Deutsche Telekom'], [2856, 'BT'], [5089, 'Virgin Media'], [5607, 'Sky UK'], [3215, 'Orange'], [12322, 'Free'],
  [3352, 'Telefonica Spain'], [3269, 'Telecom Italia'], [1136, 'KPN'], [6830, 'Liberty Global'], [12389, 'Rostelecom'],
  [4134, 'China Telecom'], [4837, 'China Unicom'], [9808, 'China Mobile'], [4713, 'NTT OCN'], [2516, 'KDDI'], [17676, 'SoftBank'],
  [55836, 'Reliance Jio'], [9498, 'Bharti Airtel'], [4766, 'Korea Telecom'], [28573, 'Claro Brazil'], [8151, 'Telmex'],
  [1221, 'Telstra'], [812, 'Rogers'], [577, 'Bell Canada'],
  [13335, 'Cloudflare (WARP)'], [20940, 'Akamai (Private Relay)'], [36183, 'Akamai (Private Relay)'], [54113, 'Fastly (Private Relay)'], [714, 'Apple'],
]);

/**
 * The curated ASN lists (is_datacenter, is_vpn) against the bundled ASN data: the IPv4 space each
 * flags, every listed ASN still announced there, and no access network on either list. Returns
 * false when an access network is listed.
 */
export function benchIpAsnLists(): boolean {
  const pkg = '@ip-location-db/asn';
  const space = new Map<number, number>();
  let total = 0;
  for (const line of text(pkg, 'asn-ipv4-num.csv').split('\n')) {
    const [start, end, asn] = line.split(',', 3).map(Number);
    if (start === undefined || end === undefined || asn === undefined || !Number.isFinite(start + end + asn)) continue;
    const size = end - start + 1;
    space.set(asn, (space.get(asn) ?? 0) + size);
    total += size;
  }
  const flagged = (list: ReadonlyMap<number, string>) => {
    let addresses = 0;
    const absent: number[] = [];
    for (const asn of list.keys()) {
      const n = space.get(asn);
      if (n === undefined) absent.push(asn);
      else addresses += n;
    }
    return { addresses, absent };
  };
  const hosting = flagged(HOSTING_ASNS);
  const vpn = flagged(VPN_ASNS);
  const wrong = [...ACCESS_NETWORKS].filter(([asn]) => HOSTING_ASNS.has(asn) || VPN_ASNS.has(asn)).map(([asn, name]) => `AS${asn} ${name}`);
  const absent = (a: number[]) => (a.length ? `; not announced in this data: ${a.map((n) => `AS${n}`).join(', ')}` : '');
  console.log(`ip (curated ASN lists against ${pkg}@${version(pkg)}, ${total.toLocaleString('en')} announced IPv4 addresses):`);
  console.log(`  is_datacenter by hosting ASN: ${HOSTING_ASNS.size} ASNs, ${pct(hosting.addresses, total)} of the addresses${absent(hosting.absent)}`);
  console.log(`  is_vpn by VPN-service ASN (says only true): ${VPN_ASNS.size} ASNs, ${vpn.addresses.toLocaleString('en')} addresses (${((100 * vpn.addresses) / total).toFixed(3)} %)${absent(vpn.absent)}`);
  console.log(`  access networks and relays on either list: ${wrong.length} of ${ACCESS_NETWORKS.size}${wrong.length ? ` ${wrong.join(', ')}` : ''}`);
  return wrong.length === 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const emailOk = await benchDetection();
  const ipOk = benchIpAsnLists();
  if (!emailOk || !ipOk) process.exitCode = 1;
}
