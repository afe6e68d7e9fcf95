import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, KEY_A, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';
import { behaviourApp, device, evaluate, HOUR, MINUTE, testClock } from './fixtures.js';

/**
 * Velocity counters (issue 28, docs/rules.md "Velocity counters") through HTTP on both engines:
 * counters defined in the account's rule files, counted in the history step, read by rules as
 * `velocity.<name>`; the window slides on a clock the test moves; erasure takes a person's own
 * counters.
 */
const REGISTER = `
velocity:
  - name: signups_per_domain_1h
    key: email.domain
    window: 1h
  - name: signups_per_network_10m
    key: ip.network
    window: 10m
  - name: events_per_device_3h
    key: device_intelligence.device_hash
    window: 3h
    event_types: [account_register, account_login]
  - name: events_per_email_2d
    key: email.canonical
    window: 2d
    event_types: [account_register, account_login]
  - name: logins_per_user_1d
    key: user.user_id
    window: 1d
    event_types: [account_login]
rules:
  - id: domain_burst
    name: Many sign-ups from one domain
    score: 30
    when: { field: velocity.signups_per_domain_1h, gte: 3 }
  - id: device_busy
    name: Busy device
    score: 5
    when: { field: velocity.events_per_device_3h, gte: 100 }
  - library: domain_velocity
    params: { signups_1h: 3 }
`;

function rulesDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'velocity-rules-'));
  cpSync('rules', dir, { recursive: true });
  writeFileSync(join(dir, 'account_register.yaml'), REGISTER);
  return dir;
}

let apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.app.close()));
  apps = [];
});

async function start(url: string, clock: ReturnType<typeof testClock>) {
  const t = await behaviourApp(url, clock, { RULES_DIR: rulesDir() });
  apps.push(t);
  return t;
}

const register = (n: number, extra: Record<string, unknown> = {}) => ({ event_type: 'account_register', email: `person${n}@burst.example`, ip: `81.2.69.${n + 10}`, ...extra });

describe.each(ENGINES)('velocity counters (%s)', (engine) => {
  it('a burst of sign-ups from one domain: counted from the first, the rule fires from the third, the window slides', async () => {
    const clock = testClock();
    const t = await start(await freshDatabaseUrl(engine), clock);
    const seen = [];
    for (let i = 1; i <= 4; i++) {
      seen.push(await evaluate(t, register(i)));
      clock.advance(MINUTE);
    }
    expect(seen.map((e) => e.history!.velocity!.signups_per_domain_1h)).toEqual([1, 2, 3, 4]);
    expect(seen.map((e) => e.history!.velocity!.signups_per_network_10m)).toEqual([1, 2, 3, 4]);
    expect(seen.map((e) => e.rules.includes('Many sign-ups from one domain'))).toEqual([false, false, true, true]);
    // The library rule counts with its own counter, the same events.
    expect(seen.map((e) => e.history!.velocity!.domain_velocity)).toEqual([1, 2, 3, 4]);
    expect(seen.map((e) => e.rules.includes('Many sign-ups from one e-mail domain'))).toEqual([false, false, true, true]);
    // No device, no user: those counters are unknown, never 0.
    expect(seen[0]!.history!.velocity).toMatchObject({ events_per_device_3h: null, logins_per_user_1d: null });
    expect(seen[0]!.unavailable).toContain('rule:device_busy');

    // Another domain is its own count.
    const other = await evaluate(t, { event_type: 'account_register', email: 'x@elsewhere.example', ip: '1.128.0.1' });
    expect(other.history!.velocity!.signups_per_domain_1h).toBe(1);

    // At minute 11, the /24's 10-minute window (minutes 2 to 11) has let the first two go; the domain's hour has not.
    clock.advance(7 * MINUTE);
    const later = await evaluate(t, register(5));
    expect(later.history!.velocity!.signups_per_network_10m).toBe(3);
    expect(later.history!.velocity!.signups_per_domain_1h).toBe(5);
    clock.advance(HOUR);
    const next = await evaluate(t, register(6));
    expect(next.history!.velocity!.signups_per_domain_1h).toBe(1);
    expect(next.rules).not.toContain('Many sign-ups from one domain');
  });

  it('counts survive a restart (written back, read again)', async () => {
    const clock = testClock();
    const url = await freshDatabaseUrl(engine);
    const first = await start(url, clock);
    await evaluate(first, register(1));
    await evaluate(first, register(2));
    await first.app.close();
    apps = apps.filter((a) => a !== first);
    clock.advance(MINUTE);
    const again = await start(url, clock);
    expect((await evaluate(again, register(3))).history!.velocity!.signups_per_domain_1h).toBe(3);
  });

  it('domain_velocity leaves a free mailbox provider alone', async () => {
    const clock = testClock();
    const t = await start(await freshDatabaseUrl(engine), clock);
    const seen = [];
    for (let i = 1; i <= 4; i++) seen.push(await evaluate(t, { event_type: 'account_register', email: `someone${i}@gmail.com`, ip: `81.2.69.${i + 10}` }));
    expect(seen.map((e) => e.history!.velocity!.domain_velocity)).toEqual([1, 2, 3, 4]);
    expect(seen.some((e) => e.rules.includes('Many sign-ups from one e-mail domain'))).toBe(false);
    expect(seen[3]!.unavailable).not.toContain('rule:domain_velocity');
  });

  it('counts event types across files: logins count in the register file\'s counters', async () => {
    const clock = testClock();
    const t = await start(await freshDatabaseUrl(engine), clock);
    const person = { email: 'ann@burst.example', device_intelligence: { device_hash: device(4) }, user: { user_id: 'ann' } };
    await evaluate(t, { ...person, event_type: 'account_login' });
    clock.advance(HOUR);
    await evaluate(t, { ...person, event_type: 'account_login' });
    clock.advance(HOUR);
    const signup = await evaluate(t, { ...person, event_type: 'account_register' });
    // The device's 3 h and the e-mail's 2 d count both types; the user's logins counter only logins (so not this event).
    expect(signup.history!.velocity).toMatchObject({ events_per_device_3h: 3, events_per_email_2d: 3, logins_per_user_1d: 2, signups_per_domain_1h: 1 });
    // The login file defines no counter: its answers carry none.
    const login = await evaluate(t, { ...person, event_type: 'account_login' });
    expect(login.history!.velocity).toBeUndefined();
  });

  it('erasure removes a person\'s own counters (e-mail, user, device); the domain\'s count stays', async () => {
    const clock = testClock();
    const t = await start(await freshDatabaseUrl(engine), clock);
    const person = { email: 'erase.me@burst.example', device_intelligence: { device_hash: device(5) }, user: { user_id: 'erase-me' } };
    await evaluate(t, { ...person, event_type: 'account_login' });
    clock.advance(MINUTE);
    const before = await evaluate(t, { ...person, event_type: 'account_register' });
    expect(before.history!.velocity).toMatchObject({ events_per_device_3h: 2, events_per_email_2d: 2, logins_per_user_1d: 1, signups_per_domain_1h: 1 });

    const erased = await t.app.inject({ method: 'POST', url: '/v1/risk/erase', headers: bearer(KEY_A), payload: { user_id: 'erase-me', email: 'erase.me@burst.example' } });
    expect(erased.statusCode, erased.body).toBe(200);
    clock.advance(MINUTE);
    const after = await evaluate(t, { ...person, event_type: 'account_register' });
    expect(after.history!.velocity).toMatchObject({ events_per_device_3h: 1, events_per_email_2d: 1, logins_per_user_1d: 0, signups_per_domain_1h: 2 });
  });
});

describe('two replicas on one PostgreSQL', () => {
  it('count one burst from a domain together', async () => {
    const url = await freshDatabaseUrl('postgres');
    const clock = testClock();
    const a = await start(url, clock);
    const b = await start(url, clock);
    const seen = [];
    for (let i = 0; i < 8; i++) {
      const replica = i % 2 === 0 ? a : b;
      seen.push(await evaluate(replica, register(i)));
      // A replica's events reach the other once its writer has sent them (every 50 ms).
      await expect.poll(() => replica.app.store.status().history!.pending, { timeout: 5_000, interval: 10 }).toBe(0);
      clock.advance(MINUTE);
    }
    expect(seen.map((e) => e.history!.velocity!.signups_per_domain_1h)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
