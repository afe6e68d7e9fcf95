/**
 * The e-mail lists alone: `npx tsx bench/email-lists.ts`. No network, no DNS.
 * Prints what loading the bundled lists costs a fresh process (time, heap) and what the list
 * checks cost for a domain seen for the first time (the work the per-domain memo saves later):
 * disposable (allowlist, relays, every list with parent matching), free provider and typo.
 */
import './temp-root.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { isListedDisposable } from '../src/email/disposable.js';
import { openEmailSources } from '../src/email/sources.js';
import { suggestDomain } from '../src/email/typo.js';

const DOMAINS = 200_000;
const ROUNDS = 3;

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** A mix of what sign-ups send: fresh company domains, subdomains of listed ones, big providers. */
function domainAt(i: number): string {
  switch (i % 4) {
    case 0:
      return `shop${i}.example-${i % 997}.com`;
    case 1:
      return `x${i}.mailinator.com`;
    case 2:
      return `team${i}.co.uk`;
    default:
      return ['gmail.com', 'yahoo.co.uk', 'outlook.com', 'gmial.com', 'web.de'][i % 5]!;
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-email-lists-'));
  const logger = pino({ level: 'silent' });
  console.log(`node ${process.version}\n`);

  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const sources = await openEmailSources({ dataDir, reloadIntervalMs: 60_000, logger });
  const loadMs = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  console.log('bundled lists, loaded once per process');
  for (const s of sources.status()) if (s.source !== 'built-in' && s.entries !== null && !s.source?.startsWith(dataDir)) console.log(`  ${s.name}: ${s.entries.toLocaleString('en')} entries`);
  console.log(`  load ${loadMs.toFixed(0)} ms (CPU ${((user + system) / 1000).toFixed(0)} ms), heap +${((heapAfter - heapBefore) / 1024 / 1024).toFixed(1)} MiB, RSS +${((process.memoryUsage().rss - rssBefore) / 1024 / 1024).toFixed(1)} MiB`);

  const data = sources.current();
  const domains = Array.from({ length: DOMAINS }, (_, i) => domainAt(i));
  let sink = 0;
  const timings: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    // CPU time, not wall time: steadier on a machine shared with other work.
    const t = process.cpuUsage();
    for (const domain of domains) {
      if (isListedDisposable(domain, data.disposable)) sink += 1;
      if (data.freeProviders.has(domain)) sink += 1;
      if (suggestDomain(domain, data.freeProviders) !== null) sink += 1;
    }
    const used = process.cpuUsage(t);
    timings.push((used.user + used.system) / 1000);
  }
  const best = Math.min(...timings);
  console.log(`\nlist checks of a domain not seen before (${DOMAINS.toLocaleString('en')} domains, best of ${ROUNDS}, CPU time)`);
  console.log(`  ${((best * 1000) / DOMAINS).toFixed(2)} µs/domain (${sink} hits)`);

  sources.close();
  await rm(dataDir, { recursive: true, force: true });
}

await main();
