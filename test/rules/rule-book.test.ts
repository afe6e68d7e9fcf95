import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { run as keysCli } from '../../src/cli/keys.js';
import { createRuleBook } from '../../src/rules/rule-book.js';
import { run as rulesCli } from '../../src/cli/rules.js';
import type { ConfigSnapshot } from '../../src/store/snapshot.js';
import { HOSTILE_FILES, hostileFile } from '../support/hostile-files.js';
import { freshDatabaseUrl } from '../support/store.js';
import { contextOf } from './context.js';

/**
 * The rule book the request path reads: the store's published versions, compiled once each by
 * the rule-file path, swapped whole on a change; a version that does not validate stops the start
 * and, on a reload, leaves the version that served before in place.
 */
const logs: Record<string, unknown>[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
const torRule = (score: number) => `rules:\n  - library: ip_tor\n    score: ${score}\n`;
const tor = (eventType = 'account_login') => contextOf({ body: { event_type: eventType }, ip: { is_tor: true } });
const acme = { id: 'acme' };
const globex = { id: 'globex' };

function snapshot(revision: number, ruleSets: ConfigSnapshot['ruleSets']): ConfigSnapshot {
  return { revision, keys: [], ruleSets, lists: [], shadows: [] };
}
const version = (id: number, account: string, eventType: string, yaml: string | null, n = id) => ({ id, account_id: account, event_type: eventType, version: n, yaml });

describe('the stored rule book', () => {
  it('serves each account its own published versions, and records which version decided', () => {
    const book = createRuleBook(snapshot(1, [version(1, 'acme', 'account_login', torRule(10)), version(2, 'globex', 'account_login', torRule(30)), version(3, 'globex', 'signup', 'rules: []\n')]), { logger });
    expect(book.eventTypes(acme)).toEqual(['account_login']);
    expect(book.eventTypes(globex)).toEqual(['account_login', 'signup']);
    expect(book.eventTypes({ id: 'nobody' })).toEqual([]);
    expect(book.evaluate(acme, tor())).toMatchObject({ fraud_score: 10, rule_set_version: 1 });
    expect(book.evaluate(globex, tor())).toMatchObject({ fraud_score: 30, rule_set_version: 2 });
    expect(book.evaluate(acme, tor('signup'))).toBeUndefined();
  });

  it('refuses to start on a stored version that does not validate, naming account, event type, version, line and path', () => {
    expect(() => createRuleBook(snapshot(1, [version(7, 'acme', 'account_login', 'rules:\n  - library: ip_tor\n    score: lots\n', 3)]), { logger })).toThrow(
      /acme\/account_login\.yaml \(v3\):3:5 rules\[0\]\.score: /,
    );
  });

  it('on a change, compiles only new versions, and keeps the last good one when a new one is refused', () => {
    const book = createRuleBook(snapshot(1, [version(1, 'acme', 'account_login', torRule(10))]), { logger });
    // The store sends no text for a version the book has compiled already.
    book.replace(snapshot(2, [version(1, 'acme', 'account_login', null), version(2, 'acme', 'password_reset', torRule(20))]));
    expect(book.evaluate(acme, tor())).toMatchObject({ fraud_score: 10, rule_set_version: 1 });
    expect(book.evaluate(acme, tor('password_reset'))).toMatchObject({ fraud_score: 20, rule_set_version: 2 });
    expect([...book.compiled()].sort()).toEqual([1, 2]);

    book.replace(snapshot(3, [version(3, 'acme', 'account_login', 'rules: nope\n', 2), version(2, 'acme', 'password_reset', null)]));
    expect(book.evaluate(acme, tor())).toMatchObject({ fraud_score: 10, rule_set_version: 1 });
    expect(book.status()).toEqual([expect.objectContaining({ name: 'rules', entries: 2, error: expect.stringMatching(/acme\/account_login\.yaml \(v2\):1:\d+ rules/) })]);
    expect(logs.some((l) => l.msg === 'stored rule set refused; the version that served before keeps serving')).toBe(true);

    // An account whose versions are no longer published (disabled, removed) is no longer served.
    book.replace(snapshot(4, [version(2, 'acme', 'password_reset', null)]));
    expect(book.eventTypes(acme)).toEqual(['password_reset']);
    expect(book.status()[0]!.error).toBeNull();
  });
});

/**
 * Issue 11, findings 4 and 5, where rule files are read now. Before the store a rules directory was
 * watched, and an alias that did not resolve stopped its reloading; an account's own directory was
 * read on its requests. Now the rule book reloads stored versions, and files are read only by
 * `RULES_DIR` at start (test/rules/http.test.ts), `rules -- apply` and an accounts file's import.
 */
describe('the files of issue 11', () => {
  it('keeps reloading around stored versions whose aliases do not resolve or expand past 100 copies', () => {
    const book = createRuleBook(snapshot(1, [
      version(1, 'acme', 'account_login', torRule(10)),
      version(2, 'acme', 'account_update', torRule(20)),
    ]), { logger });
    book.replace(snapshot(2, [
      version(3, 'acme', 'account_login', 'rules:\n  - *tor\n', 2),
      version(4, 'acme', 'password_reset', `x: &a [1]\nrules:\n${'  - *a\n'.repeat(101)}`, 1),
      version(5, 'acme', 'checkout', torRule(30), 1),
    ]));
    // The last good account_login; the broken new event type not served; the removed one gone; the new good one served.
    expect(book.eventTypes(acme)).toEqual(['account_login', 'checkout']);
    expect(book.evaluate(acme, tor())).toMatchObject({ fraud_score: 10, rule_set_version: 1 });
    expect(book.evaluate(acme, tor('checkout'))).toMatchObject({ fraud_score: 30, rule_set_version: 5 });
    const error = book.status()[0]!.error!;
    expect(error).toMatch(/acme\/account_login\.yaml \(v2\):2:5 \(file\): alias \*tor has no anchor &tor before it/);
    expect(error).toMatch(/acme\/password_reset\.yaml \(v1\):3:5 \(file\): aliases expand to more than 100 copies/);

    // The next change is still taken.
    book.replace(snapshot(3, [version(6, 'acme', 'account_login', torRule(35), 3), version(5, 'acme', 'checkout', null, 1)]));
    expect(book.evaluate(acme, tor())).toMatchObject({ fraud_score: 35, rule_set_version: 6 });
    expect(book.status()[0]!.error).toBeNull();
  });

  it.each(HOSTILE_FILES)('"rules -- apply" refuses a directory holding %s, naming the file, and publishes nothing', async (kind, reason) => {
    const env = { DATABASE_URL: await freshDatabaseUrl('sqlite'), RULES_DIR: 'rules' };
    const quiet = () => {};
    await keysCli(['create', '--account', 'acme'], quiet, quiet, env);
    const dir = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    try {
      writeFileSync(join(dir, 'account_register.yaml'), torRule(5));
      hostileFile(kind, join(dir, 'account_login.yaml'));
      await expect(rulesCli(['apply', dir, '--account', 'acme'], quiet, quiet, env)).rejects.toThrow(
        new RegExp(`account_login\\.yaml \\(file\\): refused: ${reason.source}`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Each event type still has only the version 1 the account was seeded with, published.
    const versions: string[] = [];
    await rulesCli(['versions', '--account', 'acme'], (l) => versions.push(l), quiet, env);
    expect(versions.map((l) => l.split(/\s+/).slice(0, 3).join(' '))).toEqual([
      'account_login v1 published', 'account_register v1 published', 'account_update v1 published', 'password_reset v1 published',
    ]);
  });
});
