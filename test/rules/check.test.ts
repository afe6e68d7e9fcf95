import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkRuleDirectory } from '../../src/rules/check.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rules-check-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('checkRuleDirectory', () => {
  it('passes the shipped rules', async () => {
    const { ok, lines } = await checkRuleDirectory('rules');
    expect(ok).toBe(true);
    expect(lines).toContain('ok    rules/account_register.yaml (account_register: 9 rules)');
  });

  it('fails with one line per problem, naming the file, the line and the path', async () => {
    writeFileSync(join(dir, 'account_login.yaml'), 'rules: []\n');
    writeFileSync(join(dir, 'password_reset.yaml'), 'rules:\n  - library: ip_tor\n    mode: loud\n');
    const { ok, lines } = await checkRuleDirectory(dir);
    expect(ok).toBe(false);
    expect(lines).toEqual([
      `ok    ${dir}/account_login.yaml (account_login: 0 rules)`,
      expect.stringMatching(new RegExp(`^error ${dir}/password_reset\\.yaml:3:5 rules\\[0\\]\\.mode: Invalid option`)),
    ]);
  });

  it('names a bad velocity counter with its line: a window past the bound, a rule reading an undefined counter', async () => {
    writeFileSync(join(dir, 'account_register.yaml'), [
      'velocity:',
      '  - name: per_domain',
      '    key: email.domain',
      '    window: 45d',
      'rules:',
      '  - id: burst',
      '    name: Burst',
      '    score: 20',
      '    when: { field: velocity.per_domian, gte: 5 }',
      '',
    ].join('\n'));
    const { ok, lines } = await checkRuleDirectory(dir);
    expect(ok).toBe(false);
    expect(lines).toEqual([
      `error ${dir}/account_register.yaml:4:5 velocity[0].window: a window is at most 30d`,
      `error ${dir}/account_register.yaml:9:13 rules[0].when.field: no velocity counter "per_domian": the file defines per_domain`,
    ]);
  });

  it('fails on a directory without rule files', async () => {
    expect(await checkRuleDirectory(dir)).toEqual({ ok: false, lines: [`error: no rule files (<event_type>.yaml) in ${dir}`] });
  });
});

describe('npm run rules:check', () => {
  it('exits non-zero and prints the problem on stderr', async () => {
    writeFileSync(join(dir, 'account_login.yaml'), 'rules: [ { library: ip_tor, score: high } ]\n');
    const run = promisify(execFile)('node_modules/.bin/tsx', ['src/cli/rules-check.ts', dir]);
    await expect(run).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(`${dir}/account_login.yaml:1:`) });
  });
});
