import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Account } from '../../src/evaluation/ports.js';
import { loadRuleBook, type ReloadableRuleBook } from '../../src/rules/index.js';
import { HOSTILE_FILES, hostileFile } from '../support/hostile-files.js';
import { contextOf } from './context.js';

let dir: string;
let book: ReloadableRuleBook | undefined;
let logs: Record<string, unknown>[];

const defaultAccount: Account = { id: 'default', rulesDir: undefined };
const logger = () => pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
const open = async (rulesDir = join(dir, 'rules'), accountRulesDirs?: string[]) => {
  book = await loadRuleBook({ config: loadConfig({ RULES_DIR: rulesDir, RELOAD_INTERVAL_MS: '500' }), logger: logger(), accountRulesDirs });
  return book;
};
const write = (name: string, text: string, inDir = join(dir, 'rules')) => writeFileSync(join(inDir, name), text);
const torRule = (score: number) => `rules:\n  - library: ip_tor\n    score: ${score}\n`;
const torContext = (eventType = 'account_login') => contextOf({ body: { event_type: eventType }, ip: { is_tor: true } });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rule-book-'));
  mkdirSync(join(dir, 'rules'));
  logs = [];
});
afterEach(async () => {
  await book?.close();
  book = undefined;
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe('loadRuleBook at start-up', () => {
  it('serves the shipped rules directory', async () => {
    const rules = await open('rules');
    expect((await rules.eventTypes(defaultAccount)).sort()).toEqual(['account_login', 'account_register', 'account_update', 'password_reset']);
    const outcome = rules.evaluate(defaultAccount, contextOf({ email: { disposable: true } }));
    expect(outcome).toMatchObject({
      details: [{ rule_name: 'Email address is disposable', rule_type: 'static', score: 40 }],
      fraud_score: 40,
      state: 'decline',
      signals: ['email_disposable'],
    });
    expect(rules.status().map((s) => s.name).sort()).toEqual([
      'rules.account_login', 'rules.account_register', 'rules.account_update', 'rules.password_reset',
    ]);
  });

  it('has no answer for an event type without a rule file', async () => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    expect(rules.evaluate(defaultAccount, torContext('account_register'))).toBeUndefined();
  });

  it('refuses to start on an invalid file, naming the file, the line and the path', async () => {
    write('account_login.yaml', torRule(10));
    write('account_register.yaml', 'rules:\n  - id: r\n    name: R\n    score: 5\n    when: { field: ip.asn, equals: "1" }\n');
    await expect(open()).rejects.toThrow(/account_register\.yaml:5:\d+ rules\[0\]\.when\.equals: ip\.asn is a number/);
  });

  it('refuses to start when the directory is missing', async () => {
    await expect(open(join(dir, 'nowhere'))).rejects.toThrow(/cannot read rules directory .*nowhere/);
  });

  it('refuses to start when the directory holds no rule file', async () => {
    write('account_login.json', '{}');
    await expect(open()).rejects.toThrow(/no rule files \(<event_type>\.yaml\) in rules directory .*rules/);
  });

  it('refuses to start when an account directory given up front is invalid', async () => {
    write('account_login.yaml', torRule(10));
    mkdirSync(join(dir, 'acme'));
    write('account_login.yaml', 'rules: nope\n', join(dir, 'acme'));
    await expect(open(undefined, [join(dir, 'acme')])).rejects.toThrow(/acme\/account_login\.yaml:1:\d+ rules:/);
  });
});

describe('loadRuleBook on a change on disk', () => {
  it('takes a good change', async () => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    write('account_login.yaml', torRule(35));
    await rules.checkForChanges();
    expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(35);
    expect(logs.some((l) => l.msg === 'rules loaded')).toBe(true);
  });

  it('refuses a bad change, logs it naming the file, shows it in status, and keeps the last good set', async () => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    write('account_login.yaml', 'rules:\n  - library: ip_tor\n    score: lots\n');
    await rules.checkForChanges();
    expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(10);
    const file = join(dir, 'rules', 'account_login.yaml');
    const refused = logs.find((l) => l.level === 50);
    expect(refused).toMatchObject({ file, msg: `rule file ${file} refused; its last good rule set keeps serving` });
    expect(refused?.problems).toEqual([expect.stringMatching(/account_login\.yaml:3:5 rules\[0\]\.score: /)]);
    expect(rules.status()).toEqual([
      expect.objectContaining({ name: 'rules.account_login', source: file, loaded: true, entries: 1, error: expect.stringMatching(/rules\[0\]\.score/) }),
    ]);

    write('account_login.yaml', torRule(20));
    await rules.checkForChanges();
    expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(20);
    expect(rules.status()[0]?.error).toBeNull();
  });

  it('serves a new file and drops a deleted one', async () => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    write('password_reset.yaml', torRule(15));
    rmSync(join(dir, 'rules', 'account_login.yaml'));
    await rules.checkForChanges();
    expect(rules.eventTypes(defaultAccount)).toEqual(['password_reset']);
    expect(rules.evaluate(defaultAccount, torContext('account_login'))).toBeUndefined();
  });

  it('does not serve a new file that is invalid', async () => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    write('password_reset.yaml', 'rules: [ { library: ip_tor, score: 500 } ]\n');
    await rules.checkForChanges();
    expect(rules.eventTypes(defaultAccount)).toEqual(['account_login']);
    expect(rules.status().find((s) => s.name === 'rules.password_reset')).toMatchObject({ loaded: false, entries: null, error: expect.stringMatching(/Too big/) });
  });

  it('keeps serving when the directory disappears', async () => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    rmSync(join(dir, 'rules'), { recursive: true });
    await rules.checkForChanges();
    expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(10);
    expect(rules.status().find((s) => s.name === 'rules')?.error).toMatch(/cannot read rules directory/);
  });

  it('polls every reloadIntervalMs', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    write('account_login.yaml', torRule(10));
    const rules = await open();
    write('account_login.yaml', torRule(25));
    vi.advanceTimersByTime(500);
    // The tick started a reload that reads real files: wait for that I/O, not for time to pass.
    await vi.waitFor(() => expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(25));
  });
});

describe('loadRuleBook and the files of issue 11', () => {
  it('refuses to start on an alias without its anchor, naming the file and the line', async () => {
    write('account_login.yaml', 'rules:\n  - *tor\n');
    await expect(open()).rejects.toThrow(/account_login\.yaml:2:5 \(file\): alias \*tor has no anchor &tor before it/);
  });

  it('keeps reloading the directory around a file whose aliases do not resolve', async () => {
    write('account_login.yaml', torRule(10));
    write('account_update.yaml', torRule(20));
    const rules = await open();
    write('password_reset.yaml', `x: &a [1]\nrules:\n${'  - *a\n'.repeat(101)}`);
    write('account_login.yaml', 'rules:\n  - *tor\n');
    rmSync(join(dir, 'rules', 'account_update.yaml'));
    write('checkout.yaml', torRule(30));
    await rules.checkForChanges();
    expect([...rules.eventTypes(defaultAccount) as string[]].sort()).toEqual(['account_login', 'checkout']);
    expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(10); // the last good account_login
    expect(rules.evaluate(defaultAccount, torContext('checkout'))?.fraud_score).toBe(30);
    expect(Object.fromEntries(rules.status().map((s) => [s.name, s.error]))).toEqual({
      'rules.account_login': expect.stringMatching(/account_login\.yaml:2:5 \(file\): alias \*tor has no anchor/),
      'rules.checkout': null,
      'rules.password_reset': expect.stringMatching(/password_reset\.yaml:3:5 \(file\): aliases expand to more than 100 copies/),
    });
  });

  it.each(HOSTILE_FILES)('refuses a rule file replaced by %s, and keeps its last good rule set', async (kind, reason) => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    rmSync(join(dir, 'rules', 'account_login.yaml'));
    hostileFile(kind, join(dir, 'rules', 'account_login.yaml'));
    await rules.checkForChanges();
    expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(10);
    expect(rules.status()[0]?.error).toMatch(new RegExp(`account_login\\.yaml \\(file\\): refused: ${reason.source}`));
  });
});

describe('accounts with their own rules directory', () => {
  it('loads it on first use, apart from RULES_DIR, and watches it', async () => {
    write('account_login.yaml', torRule(10));
    const acme: Account = { id: 'acme', rulesDir: join(dir, 'acme') };
    mkdirSync(join(dir, 'acme'));
    write('account_login.yaml', torRule(30), join(dir, 'acme'));
    write('signup.yaml', 'rules: []\n', join(dir, 'acme'));
    const rules = await open();
    expect((await rules.eventTypes(acme)).sort()).toEqual(['account_login', 'signup']);
    expect(rules.evaluate(acme, torContext())?.fraud_score).toBe(30);
    expect(rules.evaluate(defaultAccount, torContext())?.fraud_score).toBe(10);

    write('account_login.yaml', torRule(5), join(dir, 'acme'));
    await rules.checkForChanges();
    expect(rules.evaluate(acme, torContext())?.fraud_score).toBe(5);
  });

  it('serves the good files of an account directory and reports the broken ones', async () => {
    write('account_login.yaml', torRule(10));
    cpSync(join(dir, 'rules'), join(dir, 'acme'), { recursive: true });
    write('password_reset.yaml', 'rules: [ { library: nope } ]\n', join(dir, 'acme'));
    const rules = await open();
    const acme: Account = { id: 'acme', rulesDir: join(dir, 'acme') };
    expect(await rules.eventTypes(acme)).toEqual(['account_login']);
    expect(logs.find((l) => l.level === 50)?.file).toBe(join(dir, 'acme', 'password_reset.yaml'));
    expect(rules.status().filter((s) => s.error !== null).map((s) => s.source)).toEqual([join(dir, 'acme', 'password_reset.yaml')]);
  });

  it('answers nothing for an account whose directory is missing, and says why', async () => {
    write('account_login.yaml', torRule(10));
    const rules = await open();
    const ghost: Account = { id: 'ghost', rulesDir: join(dir, 'ghost') };
    expect(await rules.eventTypes(ghost)).toEqual([]);
    expect(rules.evaluate(ghost, torContext())).toBeUndefined();
    expect(rules.status().find((s) => s.source === join(dir, 'ghost'))?.error).toMatch(/cannot read rules directory/);
  });
});
