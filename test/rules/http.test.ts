import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuleBook } from '../../src/rules/ports.js';
import { run as keysCli } from '../../src/cli/keys.js';
import { generateKey, hashKey, keyIdOf } from '../../src/keys/key.js';
import { run as rulesCli } from '../../src/cli/rules.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { cityDatabase } from '../support/mmdb.js';
import { ruleBookFromDirectory } from '../support/rules.js';
import { freshDatabaseUrl } from '../support/store.js';

/** Issue 11 through the real app: what a rule file, a rule or a data file does never fails a request. */

let t: TestApp | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await t?.app.close();
  t = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function rulesDir(files: Record<string, string>): string {
  const dir = tempDir('risk-rules-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const customRule = (id: string, when: string) => `  - id: ${id}\n    name: ${id}\n    score: 50\n    when: ${when}\n`;
const evaluate = (app: TestApp['app'], payload: object, key = KEY_A) =>
  app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload });

describe('a regular expression against a long input', () => {
  it('answers, and /healthz answers meanwhile, for the patterns that stall a backtracking engine', async () => {
    const patterns = ['^(\\\\w?\\\\w?)+$', `^${'[a-z]{0,16}'.repeat(8)}$`, '^(([a-z])+.)+[A-Z]([a-z])+$'];
    const dir = rulesDir({ 'signup.yaml': `rules:\n${patterns.map((p, i) => customRule(`name_${i}`, `{ field: user.first_name, matches: "${p}" }`)).join('')}` });
    t = await startTestApp({ RULES_DIR: dir });
    // 255 letters and one that fails the match: a backtracking engine would take longer than the test's timeout on each.
    const name = `${'a'.repeat(255)}!`;
    const evaluations = Array.from({ length: 10 }, () => evaluate(t!.app, evaluationBody({ event_type: 'signup', user: { first_name: name } })));
    const health = t.app.inject('/healthz');
    const [answers, healthz] = await Promise.all([Promise.all(evaluations), health]);
    expect(healthz.statusCode).toBe(200);
    for (const answer of answers) {
      expect(answer.statusCode).toBe(200);
      expect(answer.json().score.details).toEqual([]);
    }
  });

  it('refuses at start-up a pattern RE2 cannot run in linear time, naming the file and the path', async () => {
    const dir = rulesDir({ 'signup.yaml': `rules:\n${customRule('back_reference', '{ field: user.first_name, matches: "(a+)\\\\1" }')}` });
    await expect(startTestApp({ RULES_DIR: dir })).rejects.toThrow(/signup\.yaml:5:\d+ rules\[0\]\.when\.matches: not a valid RE2 regular expression/);
  });
});

describe('a fact of the wrong type in a data file', () => {
  it('makes the rule on it unknown, not a 500 (a City database with a number for a city name)', async () => {
    const dataDir = tempDir('risk-data-');
    writeFileSync(join(dataDir, 'GeoLite2-City.mmdb'), cityDatabase(4, [{
      network: '81.2.69.0/24',
      data: { country: { iso_code: 'GB', names: { en: 'United Kingdom' } }, city: { names: { en: 42 } } },
    }]));
    const dir = rulesDir({ 'signup.yaml': `rules:\n${customRule('london', '{ field: ip.city, ends_with: don }')}` });
    t = await startTestApp({ RULES_DIR: dir, DATA_DIR: dataDir });
    const answer = await evaluate(t.app, evaluationBody({ event_type: 'signup', ip: '81.2.69.160' }));
    expect(answer.statusCode).toBe(200);
    expect(answer.json().unavailable).toContain('rule:london');
    expect(answer.json().score.details).toEqual([]);
  });

  it('degrades the answer when the rule step itself throws: 200, "rules" unavailable, the failure logged', async () => {
    const real = await ruleBookFromDirectory('rules');
    const broken: RuleBook = { ...real, evaluate: () => { throw new Error('a bug in the rule step'); } };
    t = await startTestApp({}, { rules: broken });
    const answer = await evaluate(t.app, evaluationBody());
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ score: { fraud_score: 0, details: [] }, unavailable: expect.arrayContaining(['rules']) });
    expect(t.logs.lines.find((l) => l.msg === 'enrichment step failed')).toMatchObject({ step: 'rules', err: { message: 'a bug in the rule step' } });
  });
});

/**
 * An account's own rules directory used to be read on the account's requests: a broken one answered
 * 500 and was read again on every request. Now such a directory is read only to be published
 * (`rules -- apply`) or imported (an accounts file's `rules_dir`), both all or nothing: its problems
 * are refused there, naming each file, and never reach a request.
 */
describe('an account rules directory that is broken', () => {
  const quiet = () => {};
  // A good file beside three broken ones: a missing anchor, 101 alias copies, a symlink to /dev/zero.
  const brokenDir = () => {
    const dir = rulesDir({
      'signup.yaml': `rules:\n${customRule('tor', '{ field: ip.is_tor, equals: true }')}`,
      'login.yaml': 'base: &base { score: 10 }\nrules:\n  - *nope\n',
      'reset.yaml': `x: &a [1]\nrules:\n${'  - *a\n'.repeat(101)}`,
    });
    symlinkSync('/dev/zero', join(dir, 'update.yaml'));
    return dir;
  };
  const expectEachFileNamed = (error: unknown, dir: string) => {
    const message = (error as Error).message;
    expect(message).toContain(`${join(dir, 'login.yaml')}:3:5 (file): alias *nope has no anchor`);
    expect(message).toContain(`${join(dir, 'reset.yaml')}:3:5 (file): aliases expand to more than 100 copies`);
    expect(message).toContain(`${join(dir, 'update.yaml')} (file): refused: not a regular file (a character device)`);
  };

  it('is refused by "rules -- apply" with every problem, publishes nothing, and the account never answers 500', async () => {
    const env = { DATABASE_URL: await freshDatabaseUrl('sqlite'), RULES_DIR: 'rules' };
    const printed: string[] = [];
    await keysCli(['create', '--account', 'beta'], (l) => printed.push(l), quiet, env);
    const key = printed[0]!;
    t = await startTestApp({ DATABASE_URL: env.DATABASE_URL });

    const dir = brokenDir();
    expectEachFileNamed(await rulesCli(['apply', dir, '--account', 'beta'], quiet, quiet, env).catch((e: unknown) => e), dir);
    await t.app.reloadConfiguration();
    for (let i = 0; i < 3; i++) {
      expect((await evaluate(t.app, evaluationBody({ event_type: 'account_login' }), key)).statusCode).toBe(200);
      // Not even the good file: all or nothing.
      const refused = await evaluate(t.app, evaluationBody({ event_type: 'signup' }), key);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().errors).toEqual([{ path: 'event_type', message: 'must be one of: account_login, account_register, account_update, password_reset' }]);
    }
  });

  it('in an accounts file, stops its import, by "keys -- import" and at start, naming the files, and imports nothing', async () => {
    const dir = brokenDir();
    const key = generateKey();
    const hash = hashKey(key);
    const file = join(tempDir('risk-keys-'), 'accounts.json');
    writeFileSync(file, JSON.stringify({ accounts: [{ id: 'beta', rules_dir: dir, keys: [{ id: keyIdOf(hash), hash, created_at: '2026-01-02T03:04:05.000Z' }] }] }));
    const env = { DATABASE_URL: await freshDatabaseUrl('sqlite'), RULES_DIR: 'rules' };

    expectEachFileNamed(await keysCli(['import', file], quiet, quiet, env).catch((e: unknown) => e), dir);
    expectEachFileNamed(await startTestApp({ DATABASE_URL: env.DATABASE_URL, ACCOUNTS_FILE: file }).catch((e: unknown) => e), dir);
    const listed: string[] = [];
    await keysCli(['list'], (l) => listed.push(l), quiet, env);
    expect(listed.join('\n')).not.toContain('beta');
  });
});

describe('RULES_DIR at start-up', () => {
  it('refuses a directory that is missing or holds no rule file (a wrong path, an unmounted volume), naming it', async () => {
    const empty = rulesDir({ 'signup.json': '{}' });
    await expect(startTestApp({ RULES_DIR: join(empty, 'nowhere') })).rejects.toThrow(/cannot read rules directory .*nowhere/);
    await expect(startTestApp({ RULES_DIR: empty })).rejects.toThrow(`no rule files (<event_type>.yaml) in rules directory ${empty}`);
  });

  it('refuses an alias without its anchor, naming the file and the line', async () => {
    const dir = rulesDir({ 'signup.yaml': 'rules: []\n', 'login.yaml': 'rules:\n  - *tor\n' });
    await expect(startTestApp({ RULES_DIR: dir })).rejects.toThrow(/login\.yaml:2:5 \(file\): alias \*tor has no anchor &tor before it/);
  });

  it('refuses a rule file that is a symlink to /dev/zero, naming it, instead of reading forever', async () => {
    const dir = rulesDir({ 'signup.yaml': 'rules: []\n' });
    symlinkSync('/dev/zero', join(dir, 'login.yaml'));
    await expect(startTestApp({ RULES_DIR: dir })).rejects.toThrow(/login\.yaml \(file\): refused: not a regular file \(a character device\)/);
  });

  it('refuses a rule file over the cap, naming it, without parsing it', async () => {
    const dir = rulesDir({ 'signup.yaml': `# ${'x'.repeat(40 * 1024)}\nrules: []\n` });
    await expect(startTestApp({ RULES_DIR: dir })).rejects.toThrow(/signup\.yaml \(file\): refused: larger than 32768 bytes/);
  });
});
