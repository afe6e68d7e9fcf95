import { execFile } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { run as keysCli } from '../../src/keys/cli.js';
import { hashKey, keyIdOf } from '../../src/keys/key.js';
import { evaluationBody } from '../support/app.js';
import { failures, runLoad } from '../support/load.js';
import { startServiceProcess, type ServiceProcess } from '../support/process.js';

/**
 * Two service processes share one accounts file, as replicas mounting the same secret do. One of
 * an account's two keys is rotated with the CLI while a bounded load uses both keys on both
 * processes: the other key never fails, and every process refuses the replaced key within 2 s.
 */

const RELOAD_INTERVAL_MS = 200;
const REFUSED_WITHIN_MS = 2_000;
const WORKERS = 8;

const execFileAsync = promisify(execFile);
let services: ServiceProcess[] = [];
afterEach(async () => {
  await Promise.all(services.map((s) => s.stop()));
  services = [];
});

async function createKey(file: string): Promise<string> {
  const out: string[] = [];
  expect(await keysCli(['create', '--account', 'acme', '--file', file], (l) => out.push(l), () => undefined)).toBe(0);
  return out[0]!;
}

describe('key rotation under load, two processes, one accounts file', () => {
  it('never fails the unchanged key; the replaced key is refused within 2 s in every process', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'risk-accounts-')), 'accounts.json');
    const kept = await createKey(file);
    const replaced = await createKey(file);
    const env = { ACCOUNTS_FILE: file, RELOAD_INTERVAL_MS: String(RELOAD_INTERVAL_MS) };
    services = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);

    let stop = false;
    /** Per process: wall-clock time (ms) the replaced key was first refused, and any acceptance sent after it. */
    const refusedAt: Array<number | null> = [null, null];
    const acceptedAfterRefusal: string[] = [];
    const keptFailures: string[] = [];
    let rotated = false;
    const answers = { beforeRotation: 0, total: 0 };
    const load = runLoad({
      url: services[0]!.url,
      workers: WORKERS,
      until: () => stop,
      // Each process gets both keys in turn.
      request: (n) => ({ url: services[n % 2]!.url, path: '/v1/risk/evaluate', key: n % 4 < 2 ? kept : replaced, body: evaluationBody() }),
      inspect: (answer, n) => {
        answers.total += 1;
        if (!rotated) answers.beforeRotation += 1;
        const service = n % 2;
        const sentAt = performance.timeOrigin + answer.sentAt;
        if (n % 4 < 2) {
          if (answer.status !== 200) keptFailures.push(`process ${service}: ${answer.status}`);
          return;
        }
        if (answer.status === 401) {
          const at = performance.timeOrigin + answer.sentAt + answer.ms;
          refusedAt[service] = Math.min(refusedAt[service] ?? at, at);
        } else if (answer.status === 200) {
          const refused = refusedAt[service] ?? null;
          if (refused !== null && sentAt > refused) acceptedAfterRefusal.push(`process ${service}`);
        } else {
          keptFailures.push(`replaced key, process ${service}: ${answer.status}`);
        }
      },
    });

    // Both keys working on both processes before the rotation.
    await expect.poll(() => answers.total, { timeout: 10_000, interval: 20 }).toBeGreaterThan(4 * WORKERS);
    const replacedId = keyIdOf(hashKey(replaced));
    const cli = await execFileAsync(process.execPath, ['--import', 'tsx', 'src/keys/cli.ts', 'rotate', '--account', 'acme', '--key', replacedId, '--file', file]);
    rotated = true;
    const newKey = cli.stdout.trim();
    expect(cli.stderr).toContain(`Replaced ${replacedId}`);
    // The CLI renames the new file into place: its mtime is the moment of the rotation.
    const rotationAt = statSync(file).mtimeMs;

    await expect.poll(() => refusedAt.every((t) => t !== null), { timeout: 10_000, interval: 20 }).toBe(true);
    // A little more load after both refused, so a late acceptance would be seen.
    const seen = answers.total;
    await expect.poll(() => answers.total - seen, { timeout: 10_000, interval: 20 }).toBeGreaterThan(4 * WORKERS);
    stop = true;
    const figures = await load;

    const latencies = refusedAt.map((t) => Math.round(t! - rotationAt));
    for (const latency of latencies) expect(latency).toBeLessThan(REFUSED_WITHIN_MS);
    expect(keptFailures).toEqual([]);
    expect(acceptedAfterRefusal).toEqual([]);
    expect(answers.beforeRotation).toBeGreaterThan(4 * WORKERS);
    // The only non-200s are the replaced key's 401s.
    expect(Object.keys(failures(figures))).toEqual(['401']);

    for (const service of services) {
      const response = await fetch(`${service.url}/v1/risk/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${newKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(evaluationBody()),
      });
      expect(response.status).toBe(200);
    }
    const codes = await Promise.all(services.map((s) => s.stop()));
    expect(codes).toEqual([0, 0]);
    console.log(`key rotation: ${figures.sent} requests over 2 processes (${answers.beforeRotation} before the rotation), ${figures.outcomes['401'] ?? 0} refusals of the replaced key, 0 failures of the kept key; refused ${latencies.join(' ms and ')} ms after the rotation`);
  });
});
