/**
 * Files at their caps: `npx tsx bench/files.ts`. For each kind of file the service reads while
 * serving, a generated file at (or near) its FILE_CAPS size is loaded as a reload would load it,
 * and the bench prints:
 *
 * - the load time;
 * - the longest the event loop's thread worked without handing the loop back ("held"): its CPU
 *   time between two ticks of a 1 ms timer (`process.threadCpuUsage`, which Linux counts in
 *   steps of a few milliseconds). This is what the code does to waiting requests;
 * - the longest gap between two ticks ("delayed"), which adds whatever else kept the thread from
 *   a core: on a busy machine, other processes;
 * - the event loop's thread's CPU over the whole load (with a worker thread, most of the work is
 *   elsewhere; the 1 ms timer itself is a few per cent of it);
 * - the RSS the load added at its peak, and what it keeps once the collector has run.
 *
 * Each scenario runs in its own process so its memory is its own. Everything is generated in a
 * temporary directory or comes with `npm ci`; nothing leaves the machine.
 */
import './temp-root.js';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { openEmailSources } from '../src/email/sources.js';
import { FILE_CAPS } from '../src/files/caps.js';
import { loadAsnCsv } from '../src/ip/asn-csv.js';
import { loadAddressList } from '../src/ip/lists.js';
import { loadMmdb } from '../src/ip/maxmind.js';
import { numberToIpv4 } from '../src/ip/numeric.js';
import { bundledOpenData } from '../src/ip/open-data.js';
import { readRuleDirectory } from '../src/rules/directory.js';

const SCENARIOS = ['rule-file', 'address-list', 'address-list-v6', 'domain-list', 'asn-csv', 'mmdb-country'] as const;
type Scenario = (typeof SCENARIOS)[number];

/** Writes a file of about `bytes` made of `line(i)`, in the order a careless operator would: unsorted. */
async function fileOf(path: string, bytes: number, line: (i: number) => string): Promise<number> {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const text = line(i);
    size += text.length + 1;
    if (size <= bytes) lines.push(text);
  }
  await writeFile(path, `${lines.join('\n')}\n`);
  return lines.length;
}

const scramble = (i: number) => (Math.imul(i, 2654435761) >>> 0);

async function prepare(scenario: Scenario, dir: string): Promise<{ what: string; load: () => Promise<unknown> }> {
  switch (scenario) {
    case 'address-list': {
      const path = join(dir, 'datacenter-ranges.txt');
      const lines = await fileOf(path, FILE_CAPS.addressList, (i) => `${numberToIpv4(scramble(i))}/32`);
      return { what: `${lines} IPv4 lines`, load: () => loadAddressList(path) };
    }
    case 'address-list-v6': {
      // Short IPv6 addresses: the most ranges the cap holds.
      const path = join(dir, 'datacenter-ranges.txt');
      const lines = await fileOf(path, FILE_CAPS.addressList, (i) => `${(scramble(i) >>> 16).toString(16)}::${(scramble(i) & 0xffff).toString(16)}`);
      return { what: `${lines} IPv6 lines`, load: () => loadAddressList(path) };
    }
    case 'domain-list': {
      // The bundled lists are built first, as at start: what is timed is the reload of the file.
      const sources = await openEmailSources({ dataDir: dir, reloadIntervalMs: 3_600_000, logger: pino({ level: 'silent' }) });
      const lines = await fileOf(join(dir, 'disposable-domains.txt'), FILE_CAPS.domainList, (i) => `throwaway-${scramble(i).toString(36)}.example`);
      return { what: `${lines} domains`, load: async () => { await sources.refresh(); sources.close(); } };
    }
    case 'asn-csv': {
      const open = await bundledOpenData();
      if (open === null) throw new Error('the bundled open data (@ip-location-db) is not installed');
      return { what: 'bundled, 515,000 rows', load: () => loadAsnCsv({ ipv4Num: open.asnIpv4NumCsv, ipv6: open.asnIpv6Csv }) };
    }
    case 'mmdb-country': {
      const open = await bundledOpenData();
      if (open === null) throw new Error('the bundled open data (@ip-location-db) is not installed');
      return { what: 'bundled, 1.4 M nodes', load: () => loadMmdb(open.countryMmdb, 'country') };
    }
    case 'rule-file': {
      const rule = (i: number) => `  - id: r${i}\n    name: Rule ${i}\n    score: 5\n    when: { field: email.domain, in: [a${i}.example, b${i}.example] }`;
      const lines = await fileOf(join(dir, 'signup.yaml'), FILE_CAPS.ruleFile - 16, (i) => (i === 0 ? 'rules:' : rule(i)));
      return { what: `${lines} rules`, load: () => readRuleDirectory(dir) };
    }
  }
}

interface Figures {
  what: string;
  tookMs: number;
  heldMs: number;
  delayedMs: number;
  cpuMs: number;
  peakMB: number;
  keptMB: number;
}

const threadCpuMs = (): number => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};

/** One scenario, in this process. */
async function runOne(scenario: Scenario): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-files-'));
  try {
    const { what, load } = await prepare(scenario, dir);
    global.gc?.();
    const rssBefore = process.memoryUsage.rss();
    let rssPeak = rssBefore;
    let held = 0;
    let delayed = 0;
    let lastAt = performance.now();
    let lastCpu = threadCpuMs();
    const sample = () => {
      const at = performance.now();
      const cpu = threadCpuMs();
      delayed = Math.max(delayed, at - lastAt);
      held = Math.max(held, cpu - lastCpu);
      lastAt = at;
      lastCpu = cpu;
    };
    const sampleRss = () => {
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    };
    const ticker = setInterval(sample, 1);
    const rssTicker = setInterval(sampleRss, 10);
    const cpuBefore = threadCpuMs();
    const started = performance.now();
    const loaded = await load();
    const took = performance.now() - started;
    clearInterval(ticker);
    clearInterval(rssTicker);
    sample();
    sampleRss();
    const cpuMs = threadCpuMs() - cpuBefore;
    global.gc?.();
    const keptMB = (process.memoryUsage.rss() - rssBefore) / 1e6;
    void loaded; // kept until here: what it holds is part of what is kept
    return { what, tookMs: took, heldMs: held, delayedMs: delayed, cpuMs, peakMB: (rssPeak - rssBefore) / 1e6, keptMB };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const only = process.argv[2] as Scenario | undefined;
if (only) {
  console.log(JSON.stringify(await runOne(only)));
} else {
  console.log(`files at their caps (Node ${process.version}); each in its own process`);
  console.log('  (held: longest CPU of the event loop\'s thread without handing the loop back; delayed: longest gap between 1 ms ticks)');
  const self = fileURLToPath(import.meta.url);
  for (const scenario of SCENARIOS) {
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', self, scenario], { maxBuffer: 1 << 20 });
    const r = JSON.parse(stdout.trim()) as Figures;
    const ms = (n: number) => `${Math.round(n)} ms`;
    console.log(
      `  ${scenario.padEnd(16)} ${r.what.padEnd(22)} loaded in ${ms(r.tookMs).padStart(7)}; event loop held ${ms(r.heldMs).padStart(6)}, ` +
        `delayed ${ms(r.delayedMs).padStart(6)}; its CPU ${ms(r.cpuMs).padStart(6)}; RSS +${Math.round(r.peakMB)} MB at the peak, +${Math.round(r.keptMB)} MB kept`,
    );
  }
}
