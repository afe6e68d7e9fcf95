import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/common.js';
import { run as rulesCli } from '../../src/cli/rules.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { freshDatabaseUrl } from '../support/store.js';
import { LIVE_RULES, WITH_EXAMPLE_ORG_RULE } from './candidate.js';

/**
 * `npm run rules -- backtest DIR`: the report as tables or JSON, and the exit code a rule
 * repository's CI reads: 1 when the candidate declines more legit-labelled evaluations than live
 * by more than the allowed number, 0 otherwise, 2 for a mistake in the command.
 */

let t: TestApp;
let env: Record<string, string>;
let candidateDir: string;
let liveDir: string;

beforeAll(async () => {
  env = { DATABASE_URL: await freshDatabaseUrl('sqlite'), RULES_DIR: 'rules' };
  t = await startTestApp(env);
  const ids: string[] = [];
  for (const [n, email] of ['a@example.org', 'b@example.org', 'c@example.com'].entries()) {
    const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ ip: `203.0.113.${n + 1}`, email }) });
    ids.push(response.json().id);
  }
  await t.app.store.log.flush();
  // The rule would decline a@ (legit) and b@ (fraud).
  await t.app.store.labels.set('default', ids[0]!, 'legit', null, { actor: 'test' });
  await t.app.store.labels.set('default', ids[1]!, 'fraud', null, { actor: 'test' });

  const root = await mkdtemp(join(tmpdir(), 'risk-backtest-cli-'));
  candidateDir = join(root, 'candidate');
  liveDir = join(root, 'live');
  await mkdir(candidateDir);
  await mkdir(liveDir);
  await writeFile(join(candidateDir, 'account_register.yaml'), WITH_EXAMPLE_ORG_RULE);
  await writeFile(join(candidateDir, 'account_login.yaml'), readFileSync('rules/account_login.yaml', 'utf8'));
  await writeFile(join(liveDir, 'account_register.yaml'), LIVE_RULES);
});
afterAll(async () => {
  await t?.app.close();
});

async function backtest(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await rulesCli(['backtest', ...args], (l) => out.push(l), (l) => err.push(l), env);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('npm run rules -- backtest', () => {
  it('prints the tables, and exits 1 when legit-labelled declines rise above the allowed number', async () => {
    const { code, out, err } = await backtest([candidateDir, '--since', '1h', '--event-type', 'account_register']);
    expect(code).toBe(1);
    expect(err).toBe('account_register: the candidate declines 1 more legit-labelled evaluations than live (allowed: 0)');
    expect(out).toContain('default / account_register:');
    expect(out).toContain('3 evaluations, 3 replayed, 0 skipped');
    expect(out).toMatch(/approve\s+1\s+0\s+2\s+3/);
    expect(out).toMatch(/Sign-up from example\.org\s+0\s+0\s+2\s+80/);
    expect(out).toContain('changed decisions (2 of 2)');

    expect((await backtest([candidateDir, '--since', '1h', '--event-type', 'account_register', '--max-legit-decline-increase', '1'])).code).toBe(0);
  });

  it('backtests every event type of the directory, and prints JSON when asked', async () => {
    const { code, out } = await backtest([candidateDir, '--since', '1h', '--json', '--max-legit-decline-increase', '5']);
    expect(code).toBe(0);
    const reports = JSON.parse(out) as Array<{ event_type: string; evaluations: number; changed: { state: number } }>;
    expect(reports.map((r) => [r.event_type, r.evaluations, r.changed.state])).toEqual([['account_login', 0, 0], ['account_register', 3, 2]]);
    // The live file itself changes nothing, so it passes at the strictest setting.
    expect((await backtest([liveDir, '--since', '1h'])).code).toBe(0);
  });

  it('refuses a mistake in the command as a usage error (exit 2), before opening the store', async () => {
    for (const args of [[candidateDir], [candidateDir, '--since', 'last week'], [candidateDir, '--since', '1h', '--until', '2h'],
      [candidateDir, '--since', '1h', '--event-type', 'checkout'], [candidateDir, '--since', '1h', '--max-legit-decline-increase', '-1'], ['--since', '1h']]) {
      await expect(backtest(args), args.join(' ')).rejects.toBeInstanceOf(UsageError);
    }
    const child = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/rules.ts', 'backtest', candidateDir, '--since', 'yesterday'], { env: { ...process.env, ...env } })
      .catch((error: { code: number; stderr: string }) => error);
    expect(child).toMatchObject({ code: 2 });
    expect((child as { stderr: string }).stderr).toContain('--since "yesterday"');
  });
});
