/**
 * Device SDK benchmark: `npx tsx bench/sdk.ts [--profiles N] [--calls N]`. Debian's Chromium,
 * headless, a page on 127.0.0.1 that loads sdk/dist/device.js (run `npm run build:sdk` first).
 * Prints the SDK's size and the time collect() takes, measured inside the page:
 * - first call: a fresh profile (a new renderer process, fonts and time-zone data not yet loaded),
 *   the case of a sign-up page opened in a new tab;
 * - later calls: the same page again.
 * Each call gets a 10 s budget, so the figure is the signals' own time, not the 500 ms cut-off.
 */
import './temp-root.js';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { SDK_DIST } from '../scripts/build-sdk.js';
import { launchChromium } from '../test/support/browser.js';

const { values } = parseArgs({ options: { profiles: { type: 'string', default: '20' }, calls: { type: 'string', default: '5' } } });
const PROFILES = Number(values.profiles);
const CALLS = Number(values.calls);

const script = readFileSync(join(SDK_DIST, 'device.js'));
const module = readFileSync(join(SDK_DIST, 'device.mjs'));
console.log(`size: device.js ${script.length} B (${gzipSync(script, { level: 9 }).length} B gzipped), device.mjs ${module.length} B (${gzipSync(module, { level: 9 }).length} B gzipped)`);

const server = createServer((request, response) => {
  if (request.url === '/device.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
  response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><link rel="icon" href="data:,"><script src="/device.js"></script>');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

const browser = await launchChromium();
/** Milliseconds one collect() takes, timed in the page. */
const TIME_COLLECT = '(async () => { const t = performance.now(); await RiskDevice.collect({ timeoutMs: 10000 }); return performance.now() - t; })()';
const first: number[] = [];
const later: number[] = [];
try {
  for (let i = 0; i < PROFILES; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(origin);
    first.push((await page.evaluate(TIME_COLLECT)) as number);
    for (let j = 0; j < CALLS; j++) later.push((await page.evaluate(TIME_COLLECT)) as number);
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const row = (name: string, xs: number[]) =>
  console.log(`${name.padEnd(34)} n=${String(xs.length).padStart(3)}  p50 ${quantile(xs, 0.5).toFixed(0).padStart(4)} ms  p90 ${quantile(xs, 0.9).toFixed(0).padStart(4)} ms  max ${Math.max(...xs).toFixed(0).padStart(4)} ms`);
row('collect(), first call, new profile', first);
row('collect(), later calls, same page', later);
console.log(`over the 500 ms default budget: ${first.filter((ms) => ms > 500).length} of ${first.length} first calls, ${later.filter((ms) => ms > 500).length} of ${later.length} later calls`);
