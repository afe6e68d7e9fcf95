import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Prior } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import { createHistoryRecorder } from '../../src/history/recorder.js';
import type { HistoryStore } from '../../src/history/store.js';
import { velocityCounter, velocityPlan, type VelocityCount } from '../../src/history/velocity.js';
import { parseEmail } from '../../src/email/address.js';
import { parseIp } from '../../src/ip/address.js';
import { parseRuleFile } from '../../src/rules/rule-file.js';
import { bearer, KEY_A, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';
import { behaviourApp, evaluate, MINUTE, testClock } from './fixtures.js';

/**
 * Velocity counters filtered on the answered state (docs/rules.md "Velocity counters", `states`)
 * through HTTP on both engines: "declined logins of this user in 10 minutes". The counter is read
 * before the rules decide, as any, and the event counted after they did, only when the answer's
 * state is one the counter takes; approved logins are not counted. Same keyed hashes and erasure.
 */
const LOGIN = `
velocity:
  - name: declined_logins_10m
    key: user.user_id
    window: 10m
    states: [decline]
  - name: logins_10m
    key: user.user_id
    window: 10m
rules:
  - id: blocked_domain
    name: Blocked domain
    score: 100
    when: { field: email.domain, equals: blocked.example }
  - id: declined_before
    name: Declined logins of this user in 10 minutes
    score: 40
    when: { field: velocity.declined_logins_10m, gte: 3 }
`;

const login = (user: string, declined: boolean) => ({
  event_type: 'account_login', user: { user_id: user }, email: `${user}@${declined ? 'blocked.example' : 'fine.example'}`,
});

describe.each(ENGINES)('velocity counters filtered on the answered state (%s)', (engine) => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'velocity-states-'));
    cpSync('rules', dir, { recursive: true });
    writeFileSync(join(dir, 'account_login.yaml'), LOGIN);
    t = await behaviourApp(await freshDatabaseUrl(engine), clock, { RULES_DIR: dir });
  });
  afterAll(async () => {
    await t?.app.close();
  });

  it('counts only declined logins, after the decision: N declined, the next login reads N; approved ones are not counted', async () => {
    const seen = [];
    // Declined, approved, declined, approved, declined: then three declines in the window.
    for (const declined of [true, false, true, false, true, false, false]) {
      seen.push(await evaluate(t, login('u1', declined)));
      clock.advance(MINUTE);
    }
    // Each value is what came before the event (its own state is not known when it is read).
    expect(seen.map((e) => e.history!.velocity!.declined_logins_10m)).toEqual([0, 1, 1, 2, 2, 3, 4]);
    // An unfiltered counter counts every login, this one included, as before.
    expect(seen.map((e) => e.history!.velocity!.logins_10m)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // From three declines the rule declines too (and that decline is counted in turn).
    expect(seen.map((e) => e.state)).toEqual(['decline', 'approve', 'decline', 'approve', 'decline', 'decline', 'decline']);
    expect(seen.map((e) => e.rules.includes('Declined logins of this user in 10 minutes'))).toEqual([false, false, false, false, false, true, true]);

    // Another user is their own count; the window slides as any counter's.
    expect((await evaluate(t, login('u2', false))).history!.velocity!.declined_logins_10m).toBe(0);
    // At minute 15 the window is minutes 6 to 15: of u1's declines (minutes 0, 2, 4, 5, 6) the last is left.
    clock.advance(8 * MINUTE);
    const later = await evaluate(t, login('u1', false));
    expect(later.history!.velocity).toMatchObject({ declined_logins_10m: 1, logins_10m: 2 });
    expect(later.state).toBe('approve');
  });

  it('erasure removes the person\'s declined count with the rest of their counters', async () => {
    await evaluate(t, login('erase-me', true));
    clock.advance(MINUTE);
    expect((await evaluate(t, login('erase-me', true))).history!.velocity!.declined_logins_10m).toBe(1);
    const erased = await t.app.inject({ method: 'POST', url: '/v1/risk/erase', headers: bearer(KEY_A), payload: { user_id: 'erase-me', email: 'erase-me@blocked.example' } });
    expect(erased.statusCode, erased.body).toBe(200);
    clock.advance(MINUTE);
    expect((await evaluate(t, login('erase-me', false))).history!.velocity).toMatchObject({ declined_logins_10m: 0, logins_10m: 1 });
  });
});

describe('a counter\'s states filter in the rule file', () => {
  it('refuses an unknown state with its path; without a filter (or with every state) a counter keeps the rows it had', () => {
    const parsed = parseRuleFile('account_login', 'account_login.yaml', LOGIN.replace('states: [decline]', 'states: [declined]'));
    expect('problems' in parsed && parsed.problems.map((p) => [p.path, p.message, p.line])).toEqual([
      ['velocity[0].states[0]', 'unknown state "declined" (one of approve, review, decline)', 6],
    ]);
    const plain = velocityCounter({ name: 'a', key: 'user.user_id', window: '10m' }, 'account_login');
    expect(velocityCounter({ name: 'b', key: 'user.user_id', window: '10m', states: ['decline', 'approve', 'review'] }, 'account_login')).toMatchObject({ series: plain.series, states: null });
    // The digest of key, grain and event types, as before states existed: existing counters keep their counts.
    expect(plain.series).toBe(createHash('sha256').update('user.user_id\u00001\u0000account_login').digest('hex').slice(0, 16));
    const declined = velocityCounter({ name: 'c', key: 'user.user_id', window: '10m', states: ['decline'] }, 'account_login');
    expect(declined).toMatchObject({ states: ['decline'] });
    expect(declined.series).not.toBe(plain.series);
  });
});

describe('the post-decision count of a history step that answered late', () => {
  it('is made once the store\'s read is back (the event is recorded then too), and not at all when the read failed', async () => {
    vi.useFakeTimers();
    try {
      // The store's read under control (a fake only for its timing; the recorder is the real one).
      const reads: Array<{ resolve: (p: Prior) => void; reject: (e: Error) => void }> = [];
      const counted: VelocityCount[][] = [];
      const store = {
        record: () => new Promise<Prior>((resolve, reject) => reads.push({ resolve, reject })),
        countAfter: (_account: string, counts: readonly VelocityCount[]) => void counted.push([...counts]),
      } as unknown as HistoryStore;
      const errors: Error[] = [];
      const step = createHistoryRecorder({ store, hash: keyedHasher(Buffer.alloc(32, 7)), available: () => true, timeoutMs: 200, onError: (e) => errors.push(e) });
      const counter = velocityCounter({ name: 'declined', key: 'user.user_id', window: '10m', states: ['decline'] }, 'account_login');
      const plan = velocityPlan('account_login', [counter], [counter]);
      const request = { event_type: 'account_login', parsedEmail: parseEmail('late@example.com'), parsedIp: parseIp('198.51.100.1'), user: { user_id: 'late' } };
      const ip = { country_code: null, latitude: null, longitude: null, accuracy_radius_km: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_datacenter: false };
      const prior = { ip: { minutes: 0, hours: 0, accounts: { count: 0, current: null } }, email: { hours: 0, firstSeen: null, devices: { count: 0, current: null } }, device: null, user: null, velocity: [0] } as unknown as Prior;

      const late = step('acme', request as never, ip as never, Date.parse('2026-06-01T12:00:00Z'), plan) as Promise<{ facts: { partial: boolean; velocity: unknown }; decided?: (s: 'approve' | 'review' | 'decline') => void }>;
      await vi.advanceTimersByTimeAsync(200);
      const answered = await late;
      // Too late: this replica's own counts, in which the counter is unknown.
      expect(answered.facts).toMatchObject({ partial: true, velocity: { declined: null } });
      answered.decided!('decline');
      expect(counted).toEqual([]);
      reads[0]!.resolve(prior);
      await vi.advanceTimersByTimeAsync(0);
      expect(counted.map((c) => c.length)).toEqual([1]);

      // Approved: nothing to count; a read that failed: the event was not recorded, nor is its count.
      const approved = step('acme', request as never, ip as never, Date.parse('2026-06-01T12:01:00Z'), plan) as Promise<{ decided?: (s: 'approve' | 'review' | 'decline') => void }>;
      reads[1]!.resolve(prior);
      (await approved).decided!('approve');
      const failed = step('acme', request as never, ip as never, Date.parse('2026-06-01T12:02:00Z'), plan) as Promise<{ decided?: (s: 'approve' | 'review' | 'decline') => void }>;
      await vi.advanceTimersByTimeAsync(200);
      (await failed).decided!('decline');
      reads[2]!.reject(new Error('connection lost'));
      await vi.advanceTimersByTimeAsync(0);
      expect(counted.map((c) => c.length)).toEqual([1]);
      expect(errors.map((e) => e.message)).toEqual(['connection lost']);
    } finally {
      vi.useRealTimers();
    }
  });
});
