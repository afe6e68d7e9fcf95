import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceStatus } from '../../src/core/ports.js';
import { evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { failures, runLoad, type Answer } from '../support/load.js';
import { cityDatabase, cityRecord } from '../support/mmdb.js';
import { replaceFile } from '../ip/fixtures.js';

/**
 * A City database and the Tor list are replaced by corrupt copies while a bounded load runs through
 * the HTTP API of the real app: no request may fail, the last good copies keep answering, the
 * app's source status (`app.sources()`, which the admin API will serve) shows each refusal, and
 * good copies written afterwards are picked up.
 */

const CITY_IP = '81.2.69.160';
const TOR_IP = '185.220.101.1';
/** Listed only in the second good copy of the Tor list. */
const NEW_TOR_IP = '185.220.101.2';
const WORKERS = 6;

const city = (name: string) =>
  cityDatabase(6, [{ network: '81.2.69.0/24', data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: name }) }]);

/** Copies that must be refused: each is a way a download or a copy goes wrong. */
function corruptDatabases(good: Buffer): Array<[string, Buffer]> {
  const treeGarbled = Buffer.from(good);
  // The search tree overwritten: every record points far past the data section.
  treeGarbled.fill(0xff, 0, 64);
  return [
    ['truncated', good.subarray(0, good.length - 300)],
    ['search tree garbled', treeGarbled],
    ['empty', Buffer.alloc(0)],
    ['an HTML error page', Buffer.from('<html><body>502 Bad Gateway</body></html>\n')],
  ];
}
const CORRUPT_LISTS: Array<[string, string]> = [
  ['an HTML error page', '<html>\n<head><title>502 Bad Gateway</title></head>\n<body>502 Bad Gateway</body>\n</html>\n'],
  // A download that failed before its first byte, or a full disk: no entries at all.
  ['empty', ''],
];

interface Body {
  ip: { address: string; city: string | null; is_tor: boolean | null };
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

/** The sources by name, read in-process: public `/readyz` says only ready or not. */
function sourcesByName(): Record<string, SourceStatus> {
  return Object.fromEntries(t!.app.sources().map((s) => [s.name, s]));
}

describe('data files replaced by corrupt copies under load', () => {
  it('serves every request from the last good copy, reports the refusals, and picks up a good copy', async () => {
    t = await startTestApp({ RELOAD_INTERVAL_MS: '100' });
    const dir = t.config.dataDir;
    const cityPath = join(dir, 'GeoLite2-City.mmdb');
    const torPath = join(dir, 'tor-exit-nodes.txt');
    const good = city('London');
    await writeFile(cityPath, good);
    await writeFile(torPath, `${TOR_IP}\n`);
    // The app was built before the files existed: the watcher loads them like any change.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    await expect.poll(() => sourcesByName()['ip.list.tor']?.loaded, { timeout: 5_000 }).toBe(true);
    await expect.poll(() => sourcesByName()['ip.maxmind.city']?.loaded, { timeout: 5_000 }).toBe(true);

    const loaded = sourcesByName();
    const goodEntries: Record<string, number | null> = {
      'ip.maxmind.city': loaded['ip.maxmind.city']!.entries,
      'ip.list.tor': loaded['ip.list.tor']!.entries,
    };
    let phase: 'good' | 'corrupt' | 'replaced' | 'done' = 'good';
    const wrong: string[] = [];
    const answered = { corrupt: 0, total: 0 };
    const inspect = (answer: Answer, n: number): void => {
      answered.total += 1;
      if (phase === 'corrupt') answered.corrupt += 1;
      if (answer.status !== 200) return;
      const { ip } = answer.body as Body;
      // Until the new copies are in, the old ones answer; never nothing.
      if (n % 2 === 0 && ip.city !== 'London' && ip.city !== 'Manchester') wrong.push(`${ip.address}: city ${ip.city}`);
      if (n % 2 === 1 && ip.is_tor !== true) wrong.push(`${ip.address}: is_tor ${String(ip.is_tor)}`);
    };
    const load = runLoad({
      url,
      workers: WORKERS,
      until: () => phase === 'done',
      request: (n) => ({ path: '/v1/risk/evaluate', key: KEY_A, body: evaluationBody({ ip: n % 2 === 0 ? CITY_IP : TOR_IP }) }),
      inspect,
    });

    phase = 'corrupt';
    const refusals: string[] = [];
    const badCopies: Array<[string, string, Buffer | string]> = [
      ...corruptDatabases(good).map(([what, bytes]): [string, string, Buffer] => [what, cityPath, bytes]),
      ...CORRUPT_LISTS.map(([what, text]): [string, string, string] => [what, torPath, text]),
    ];
    const refusedLines = (path: string) => t!.logs.lines.filter((l) => l.level === 'error' && l.msg === `ip data file refused: ${path}`).length;
    for (const [what, path, bytes] of badCopies) {
      const source = path === cityPath ? 'ip.maxmind.city' : 'ip.list.tor';
      const before = answered.total;
      const refusedBefore = refusedLines(path);
      await replaceFile(path, bytes);
      // Refused within a few reload intervals (the log line is the event), the last good copy still loaded…
      await expect.poll(() => refusedLines(path), { timeout: 5_000, interval: 20, message: `${what} ${source} refused` }).toBe(refusedBefore + 1);
      expect(sourcesByName()[source]).toMatchObject({ loaded: true, error: expect.stringContaining(path) });
      refusals.push(`${source}: ${what}`);
      // …and requests answered while it lies there.
      await expect.poll(() => answered.total - before, { timeout: 5_000, interval: 20 }).toBeGreaterThan(2 * WORKERS);
      // The copy serving is still the good one.
      expect(sourcesByName()[source]!.entries).toBe(goodEntries[source]);
    }

    phase = 'replaced';
    await replaceFile(cityPath, city('Manchester'));
    await replaceFile(torPath, `${TOR_IP}\n${NEW_TOR_IP}\n`);
    await expect
      .poll(() => {
        const sources = sourcesByName();
        return [sources['ip.maxmind.city']?.error, sources['ip.list.tor']?.error, sources['ip.list.tor']?.entries];
      }, { timeout: 5_000, interval: 50 })
      .toEqual([null, null, 2]);
    const check = async (ip: string) => {
      const response = await fetch(`${url}/v1/risk/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
        body: JSON.stringify(evaluationBody({ ip })),
      });
      return ((await response.json()) as Body).ip;
    };
    expect(await check(CITY_IP)).toMatchObject({ city: 'Manchester' });
    expect(await check(NEW_TOR_IP)).toMatchObject({ is_tor: true });

    phase = 'done';
    const figures = await load;
    expect(failures(figures)).toEqual({});
    expect(wrong).toEqual([]);
    expect(refusals).toHaveLength(badCopies.length);
    expect(answered.corrupt).toBeGreaterThan(badCopies.length * 2 * WORKERS);
    console.log(`data faults: ${figures.sent} requests (${answered.corrupt} while corrupt copies lay in DATA_DIR), ${badCopies.length} copies refused, 0 failed`);
  });
});
