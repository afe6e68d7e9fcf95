import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createRuleBook } from '../../src/rules/rule-book.js';
import type { ConfigSnapshot } from '../../src/store/snapshot.js';
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
  return { revision, keys: [], ruleSets };
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
