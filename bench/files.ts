/**
 * Files at their caps: `npx tsx bench/files.ts`. For each kind of file the service parses while
 * serving, a generated file at (or near) its FILE_CAPS size is loaded as a reload would load it,
 * and the bench prints the load time, the longest the event loop was held (what every request
 * would wait) and the RSS it cost. Each scenario runs in its own process so its memory is its
 * own. Everything is generated in a temporary directory; nothing leaves the machine.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { openEmailSources } from '../src/email/sources.js';
import { FILE_CAPS } from '../src/files/caps.js';
import { loadAddressList } from '../src/ip/lists.js';
import { numberToIpv4 } from '../src/ip/numeric.js';
import { readRuleDirectory } from '../src/rules/directory.js';

type Scenario = 'address-list' | 'domain-list' | 'rule-file';

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

async function prepare(scenario: Scenario, dir: string): Promise<{ lines: number; load: () => Promise<unknown> }> {
  if (scenario === 'address-list') {
    const path = join(dir, 'datacenter-ranges.txt');
    const lines = await fileOf(path, FILE_CAPS.addressList, (i) => `${numberToIpv4(scramble(i))}/32`);
    return { lines, load: () => loadAddressList(path) };
  }
  if (scenario === 'domain-list') {
    // The bundled lists are built first, as at start: what is timed is the reload of the file.
    const sources = await openEmailSources({ dataDir: dir, reloadIntervalMs: 3_600_000, logger: pino({ level: 'silent' }) });
    const lines = await fileOf(join(dir, 'disposable-domains.txt'), FILE_CAPS.domainList, (i) => `throwaway-${scramble(i).toString(36)}.example`);
    return { lines, load: async () => { await sources.refresh(); sources.close(); } };
  }
  const rule = (i: number) => `  - id: r${i}\n    name: Rule ${i}\n    score: 5\n    when: { field: email.domain, in: [a${i}.example, b${i}.example] }`;
  const lines = await fileOf(join(dir, 'signup.yaml'), FILE_CAPS.ruleFile - 16, (i) => (i === 0 ? 'rules:' : rule(i)));
  return { lines, load: () => readRuleDirectory(dir) };
}

/** One scenario, in this process: the longest gap between 1 ms ticks while the load runs. */
async function runOne(scenario: Scenario): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-files-'));
  try {
    const { lines, load } = await prepare(scenario, dir);
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let longest = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    const started = performance.now();
    const result = await load();
    const took = performance.now() - started;
    clearInterval(ticker);
    longest = Math.max(longest, performance.now() - last);
    const rss = process.memoryUsage().rss - rssBefore;
    void result;
    console.log(JSON.stringify({ scenario, lines, tookMs: Math.round(took), longestStallMs: Math.round(longest), rssMB: Math.round(rss / 1e6) }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const only = process.argv[2] as Scenario | undefined;
if (only) {
  await runOne(only);
} else {
  console.log(`files at their caps (Node ${process.version}); each in its own process`);
  const self = fileURLToPath(import.meta.url);
  for (const scenario of ['rule-file', 'address-list', 'domain-list'] as const) {
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', self, scenario], { maxBuffer: 1 << 20 });
    const r = JSON.parse(stdout.trim()) as { lines: number; tookMs: number; longestStallMs: number; rssMB: number };
    console.log(`  ${scenario.padEnd(13)} ${String(r.lines).padStart(9)} lines: loaded in ${r.tookMs} ms, event loop held at most ${r.longestStallMs} ms, RSS +${r.rssMB} MB`);
  }
}
