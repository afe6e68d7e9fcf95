/**
 * IP intelligence micro-benchmark: `npx tsx bench/ip.ts`. Prints address parses and look-ups per
 * second per source and for the whole `inspect` (also for IPv6 addresses that carry an IPv4 client,
 * each checked twice), and start-up time and RSS (1) with the bundled open data, (2) with a
 * generated 100,000-range data-center list. Each start-up scenario runs in its own process so its
 * memory is its own. The MaxMind databases are generated (no real ones here), in the official
 * schemas. Nothing leaves the machine.
 */
import './temp-root.js';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.js';
import { parseIp, type ParsedIp } from '../src/ip/address.js';
import { isBogon } from '../src/ip/bogon.js';
import { createIpInspector } from '../src/ip/index.js';
import { numberToIpv4, keyOf } from '../src/ip/numeric.js';
import {
  anonymousIpDatabase, anonymousIpRecord, asnDatabase, asnRecord, cityDatabase, cityRecord, type MmdbValue,
} from '../test/support/mmdb.js';

const LOOKUPS = 200_000;
const silent = pino({ level: 'silent' });

/** Deterministic pseudo-random numbers (xorshift32), so every run looks up the same addresses. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function addressTexts(n: number): string[] {
  const next = random(42);
  return Array.from({ length: n }, () => next() < 0.8
    ? numberToIpv4(Math.floor(next() * 2 ** 32))
    : `2${Math.floor(next() * 0xfff).toString(16).padStart(3, '0')}:${Math.floor(next() * 0xffff).toString(16)}::${Math.floor(next() * 0xffff).toString(16)}`);
}

/** IPv6 addresses that carry a random IPv4 client address: NAT64, 6to4 and Teredo in turn. */
function carrierTexts(n: number): string[] {
  const next = random(99);
  const hex = (v: number) => `${(v >>> 16).toString(16)}:${(v & 0xffff).toString(16)}`;
  return Array.from({ length: n }, (_, i) => {
    const v4 = (Math.floor(next() * 0xfeffffff) + 0x01000000) >>> 0;
    return [`64:ff9b::${hex(v4)}`, `2002:${hex(v4)}::1`, `2001:0:4136:e378:8000:63bf:${hex(~v4 >>> 0)}`][i % 3]!;
  });
}

function parsed(texts: string[]): ParsedIp[] {
  return texts.flatMap((text) => {
    const ip = parseIp(text);
    return 'error' in ip ? [] : [ip];
  });
}

function gc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en-US')}/s`;

/** Best of three rounds: the machine may be shared, and the best round is the least disturbed. */
function measure<T>(label: string, ips: T[], lookup: (ip: T) => unknown): void {
  for (let i = 0; i < 10_000; i++) lookup(ips[i % ips.length]!); // warm up
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    for (let i = 0; i < LOOKUPS; i++) lookup(ips[i % ips.length]!);
    best = Math.min(best, performance.now() - start);
  }
  console.log(`  ${label.padEnd(52)} ${rate(LOOKUPS, best).padStart(14)}`);
}

/** A data-center list of `n` distinct /24s and /48s, as `data:update` writes them. */
function datacenterList(n: number): string {
  const next = random(7);
  const lines = ['# generated'];
  for (let i = 0; i < n; i++) {
    lines.push(next() < 0.85
      ? `${numberToIpv4(Math.floor(next() * 2 ** 24) * 256)}/24`
      : `2${Math.floor(next() * 0xfff).toString(16).padStart(3, '0')}:${Math.floor(next() * 0xffff).toString(16)}:${Math.floor(next() * 0xffff).toString(16)}::/48`);
  }
  return `${lines.join('\n')}\n`;
}

/** Generated MaxMind databases in the official schemas: 20,000 networks each. */
async function writeMaxMind(dir: string): Promise<void> {
  const next = random(11);
  const nets = (make: (i: number) => MmdbValue) => Array.from({ length: 20_000 }, (_, i) => ({
    network: `${numberToIpv4(Math.floor(next() * 2 ** 22) * 1024)}/22`,
    data: make(i),
  }));
  await writeFile(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(6, nets((i) => cityRecord({
    countryCode: 'GB', country: 'United Kingdom', city: `City ${i % 500}`, region: { code: 'ENG', name: 'England' },
    latitude: 51.5, longitude: -0.1, timeZone: 'Europe/London', postalCode: `P${i % 900}`,
  }))));
  await writeFile(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(6, nets((i) => asnRecord(64500 + (i % 1000), `Org ${i % 1000}`))));
  await writeFile(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, nets((i) => anonymousIpRecord({ vpn: i % 2 === 0, hosting: i % 3 === 0 }))));
  await writeFile(join(dir, 'tor-exit-nodes.txt'), Array.from({ length: 1500 }, () => numberToIpv4(Math.floor(next() * 2 ** 32))).join('\n'));
  await writeFile(join(dir, 'proxy-list.txt'), datacenterList(10_000));
}

/** One start-up scenario, in this (fresh) process: prints a JSON line for the parent. */
async function startupScenario(scenario: string, dataDir: string): Promise<void> {
  gc();
  const before = process.memoryUsage().rss;
  const start = performance.now();
  const inspector = await createIpInspector({
    config: loadConfig({ DATA_DIR: dataDir }),
    logger: silent,
    openData: scenario === 'open-default' ? undefined : null,
  });
  const ms = performance.now() - start;
  // Array buffers are freed by a background task after a collection: let it run before measuring.
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  const after = process.memoryUsage();
  console.log(JSON.stringify({ ms, rss: after.rss, rssDelta: after.rss - before, heap: after.heapUsed, external: after.external }));
  await inspector.close();
}

type Startup = { ms: number; rss: number; rssDelta: number; heap: number; external: number };

/** Three runs, each in a fresh process; the figures of the fastest are shown, with the slowest time. */
async function runScenario(label: string, scenario: string, dataDir: string): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const runs: Startup[] = [];
  for (let i = 0; i < 3; i++) {
    const { stdout } = await promisify(execFile)(process.execPath, [...process.execArgv, self, 'startup', scenario, dataDir]);
    runs.push(JSON.parse(stdout.trim().split('\n').pop()!) as Startup);
  }
  runs.sort((a, b) => a.ms - b.ms);
  const r = runs[0]!;
  console.log(
    `  ${label.padEnd(40)} ${r.ms.toFixed(0).padStart(5)} ms (slowest ${runs[2]!.ms.toFixed(0)})  ` +
      `RSS ${mb(r.rss)} (+${mb(r.rssDelta)}), heap ${mb(r.heap)}, external ${mb(r.external)}`,
  );
}

async function main(): Promise<void> {
  if (process.argv[2] === 'startup') return startupScenario(process.argv[3]!, process.argv[4]!);

  console.log(`node ${process.version}, ${LOOKUPS.toLocaleString('en-US')} look-ups per figure, 80% IPv4 / 20% IPv6 random addresses`);
  const texts = addressTexts(50_000);
  const ips = parsed(texts);
  const carriers = parsed(carrierTexts(50_000));
  const empty = await mkdtemp(join(tmpdir(), 'bench-ip-empty-'));
  const full = await mkdtemp(join(tmpdir(), 'bench-ip-full-'));
  const dc = await mkdtemp(join(tmpdir(), 'bench-ip-dc-'));
  try {
    console.log('\nstart-up (own process each; RSS of the whole process, delta against before the load)');
    await runScenario('open default (dbip-country + asn CSV)', 'open-default', empty);
    await writeFile(join(dc, 'datacenter-ranges.txt'), datacenterList(100_000));
    await runScenario('100,000-range datacenter-ranges.txt', 'list-only', dc);

    console.log('\nlook-ups per second, per source');
    const openOnly = await createIpInspector({ config: loadConfig({ DATA_DIR: empty }), logger: silent });
    await writeMaxMind(full);
    await writeFile(join(full, 'datacenter-ranges.txt'), datacenterList(100_000));
    const everything = await createIpInspector({ config: loadConfig({ DATA_DIR: full }), logger: silent, openData: null });
    const dcOnly = await createIpInspector({ config: loadConfig({ DATA_DIR: dc }), logger: silent, openData: null });
    measure('parseIp (the request path parses each address once)', texts, parseIp);
    measure('bogon table', ips, (ip) => isBogon(keyOf(ip)));
    await lookupPerSource(ips, full);

    console.log('\nwhole inspect()');
    measure('open default only', ips, (ip) => openOnly.inspect(ip));
    measure('100,000-range datacenter list only', ips, (ip) => dcOnly.inspect(ip));
    measure('City + ASN + Anonymous-IP + 3 lists (100k dc)', ips, (ip) => everything.inspect(ip));
    measure('the same, IPv6 carrying IPv4 (NAT64/6to4/Teredo)', carriers, (ip) => everything.inspect(ip));
    await Promise.all([openOnly.close(), everything.close(), dcOnly.close()]);
  } finally {
    await Promise.all([empty, full, dc].map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** Each source alone, through the same modules the inspector uses. */
async function lookupPerSource(ips: ParsedIp[], full: string): Promise<void> {
  const { loadMmdb } = await import('../src/ip/maxmind.js');
  const { loadAddressList } = await import('../src/ip/lists.js');
  const { loadAsnCsv } = await import('../src/ip/asn-csv.js');
  const { bundledOpenData } = await import('../src/ip/open-data.js');
  const open = (await bundledOpenData())!;
  const country = await loadMmdb(open.countryMmdb, 'country');
  const asn = await loadAsnCsv({ ipv4Num: open.asnIpv4NumCsv, ipv6: open.asnIpv6Csv });
  measure('open country (dbip-country.mmdb)', ips, (ip) => country.lookup(ip));
  measure('open ASN (range table from the CSV)', ips, (ip) => asn.lookup(keyOf(ip)));
  for (const [file, kind] of [['GeoLite2-City.mmdb', 'city'], ['GeoLite2-ASN.mmdb', 'asn'], ['GeoIP2-Anonymous-IP.mmdb', 'anonymous-ip']] as const) {
    const db = await loadMmdb(join(full, file), kind);
    measure(`${file} (generated, 20,000 networks)`, ips, (ip) => db.lookup(ip));
  }
  for (const file of ['tor-exit-nodes.txt', 'proxy-list.txt', 'datacenter-ranges.txt']) {
    const list = await loadAddressList(join(full, file));
    measure(`${file} (${list.entries.toLocaleString('en-US')} entries)`, ips, (ip) => list.has(keyOf(ip)));
  }
}

await main();
