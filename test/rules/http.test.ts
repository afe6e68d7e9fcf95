import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuleBook } from '../../src/evaluation/ports.js';
import { run as keysCli } from '../../src/keys/cli.js';
import { createKeyStore } from '../../src/keys/key-store.js';
import { loadRuleBook } from '../../src/rules/index.js';
import { loadConfig } from '../../src/config.js';
import { pino } from 'pino';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { cityDatabase } from '../support/mmdb.js';

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
    const real = await loadRuleBook({ config: loadConfig({ RULES_DIR: 'rules' }), logger: pino({ level: 'silent' }) });
    const broken: RuleBook = { ...real, evaluate: () => { throw new Error('a bug in the rule step'); } };
    t = await startTestApp({}, { rules: broken });
    const answer = await evaluate(t.app, evaluationBody());
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ score: { fraud_score: 0, details: [] }, unavailable: expect.arrayContaining(['rules']) });
    expect(t.logs.lines.find((l) => l.msg === 'enrichment step failed')).toMatchObject({ step: 'rules', err: { message: 'a bug in the rule step' } });
  });
});

describe('an account whose own rules directory is broken', () => {
  it('is read once, serves its good files and never answers 500', async () => {
    const accounts = join(tempDir('risk-keys-'), 'accounts.json');
    const printed: string[] = [];
    const cli = (...args: string[]) => keysCli([...args, '--file', accounts], (l) => printed.push(l), () => {});
    await cli('create', '--account', 'acme');
    const keys = await createKeyStore({ apiKeys: [], accountsFile: accounts, reloadIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    t = await startTestApp({ API_KEYS: '', ACCOUNTS_FILE: accounts }, { keys });

    // An account added while the service runs: its directory is read on its first request.
    const beta = rulesDir({
      'signup.yaml': `rules:\n${customRule('tor', '{ field: ip.is_tor, equals: true }')}`,
      'login.yaml': 'base: &base { score: 10 }\nrules:\n  - *nope\n',
      'reset.yaml': `x: &a [1]\nrules:\n${'  - *a\n'.repeat(101)}`,
    });
    symlinkSync('/dev/zero', join(beta, 'update.yaml'));
    await cli('create', '--account', 'beta', '--rules-dir', beta);
    await keys.checkForChanges();
    const key = printed.at(-1)!;

    for (let i = 0; i < 3; i++) {
      expect((await evaluate(t.app, evaluationBody({ event_type: 'signup' }), key)).statusCode).toBe(200);
      const refused = await evaluate(t.app, evaluationBody({ event_type: 'login' }), key);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().errors).toEqual([{ path: 'event_type', message: 'must be one of: signup' }]);
    }
    const refusals = t.logs.lines.filter((l) => typeof l.msg === 'string' && /^rule file .* refused/.test(l.msg as string));
    expect(refusals.map((l) => l.file).sort()).toEqual([join(beta, 'login.yaml'), join(beta, 'reset.yaml'), join(beta, 'update.yaml')]);
    expect(refusals.map((l) => (l.problems as string[])[0]).sort()).toEqual([
      expect.stringMatching(/login\.yaml:3:5 \(file\): alias \*nope has no anchor/),
      expect.stringMatching(/reset\.yaml:3:5 \(file\): aliases expand to more than 100 copies/),
      expect.stringMatching(/update\.yaml \(file\): refused: not a regular file \(a character device\)/),
    ]);
  });
});

describe('RULES_DIR at start-up', () => {
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
