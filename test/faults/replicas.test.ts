import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { run as keysCli } from '../../src/cli/keys.js';
import { hashKey, keyIdOf } from '../../src/keys/key.js';
import { evaluationBody } from '../support/app.js';
import { failures, runLoad } from '../support/load.js';
import { startServiceProcess, type ServiceProcess } from '../support/process.js';
import { freshDatabaseUrl, openTestStore } from '../support/store.js';

/**
 * Two service processes on one PostgreSQL, as replicas behind a load balancer. One of an account's
 * two keys is rotated with the CLI while a bounded load uses both keys on both processes: the other
 * key never fails, and every process refuses the replaced key within 2 s (RELOAD_INTERVAL_MS is
 * 200). Then a rule set is published with the CLI: both processes decide with it within 2 s.
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

async function createKey(url: string): Promise<string> {
  const out: string[] = [];
  expect(await keysCli(['create', '--account', 'acme'], (l) => out.push(l), () => undefined, { DATABASE_URL: url, RULES_DIR: 'rules' })).toBe(0);
  return out[0]!;
}

/** When the store recorded a change (its audit log's clock is this machine's). */
async function changedAt(url: string, action: string): Promise<number> {
  const store = await openTestStore({ url }, { writeLog: false });
  try {
    return (await store.audit({ account: 'acme' })).find((entry) => entry.action === action)!.at;
  } finally {
    await store.close();
  }
}

describe('two replicas on one PostgreSQL', () => {
  it('never fail the unchanged key; both refuse the replaced key, and decide with a published rule set, within 2 s', async () => {
    const url = await freshDatabaseUrl('postgres');
    const kept = await createKey(url);
    const replaced = await createKey(url);
    const env = { API_KEYS: '', DATABASE_URL: url, RELOAD_INTERVAL_MS: String(RELOAD_INTERVAL_MS) };
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
    const cli = await execFileAsync(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', 'rotate', '--account', 'acme', '--key', replacedId], {
      env: { PATH: process.env.PATH, DATABASE_URL: url },
    });
    rotated = true;
    const newKey = cli.stdout.trim();
    expect(cli.stderr).toContain(`Replaced ${replacedId}`);
    const rotationAt = await changedAt(url, 'key.rotate.revoke');

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

    // A rule set published with the CLI: a custom rule on the test range decides in both processes.
    const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    writeFileSync(join(rules, 'account_register.yaml'), 'rules:\n  - id: test_range\n    name: Test range\n    score: 45\n    when: { field: ip.address, cidr: 203.0.113.0/24 }\n');
    await execFileAsync(process.execPath, ['--import', 'tsx', 'src/cli/rules.ts', 'apply', rules, '--account', 'acme', '--comment', 'test range'], {
      env: { PATH: process.env.PATH, DATABASE_URL: url },
    });
    const publishedAt = await changedAt(url, 'rule_set.publish');
    const decidedAt: number[] = [];
    for (const service of services) {
      await expect.poll(async () => {
        const response = await fetch(`${service.url}/v1/risk/evaluate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${kept}`, 'content-type': 'application/json' },
          body: JSON.stringify(evaluationBody({ ip: '203.0.113.5' })),
        });
        return ((await response.json()) as { score: { state: string } }).score.state;
      }, { timeout: 10_000, interval: 20 }).toBe('decline');
      decidedAt.push(Date.now() - publishedAt);
    }
    for (const latency of decidedAt) expect(latency).toBeLessThan(REFUSED_WITHIN_MS);

    const codes = await Promise.all(services.map((s) => s.stop()));
    expect(codes).toEqual([0, 0]);
    console.log(`replicas: ${figures.sent} requests over 2 processes (${answers.beforeRotation} before the rotation), ${figures.outcomes['401'] ?? 0} refusals of the replaced key, 0 failures of the kept key; refused ${latencies.join(' ms and ')} ms after the rotation; the published rule set decided within ${decidedAt.join(' and ')} ms`);
  }, 90_000);
});
