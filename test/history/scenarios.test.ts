import { afterEach, describe, expect, it, vi } from 'vitest';
import { readRuleFiles } from '../../src/rules/templates.js';
import { bearer, KEY_A, type TestApp } from '../support/app.js';
import { expectProblem } from '../support/contract.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';
import { behaviourApp, device, evaluate, HOUR, MINUTE, PLACES, testClock } from './fixtures.js';

/**
 * PRODUCT.md "Behaviour" through HTTP, on both engines: the real app, real .mmdb files, and a clock
 * the test moves instead of waiting.
 */
let apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.app.close()));
  apps = [];
});

async function start(engine: (typeof ENGINES)[number], clock = testClock(), env: Record<string, string> = {}) {
  const t = await behaviourApp(await freshDatabaseUrl(engine), clock, env);
  apps.push(t);
  return { t, clock };
}

describe.each(ENGINES)('behaviour history (%s)', (engine) => {
  it('five sign-ups from one address: counted from the first, ip_velocity from the fifth, the hour window slides', async () => {
    const { t, clock } = await start(engine);
    const seen = [];
    for (let i = 1; i <= 5; i++) {
      seen.push(await evaluate(t, { event_type: 'account_register', email: `signup${i}@example.com` }));
      clock.advance(MINUTE);
    }
    expect(seen.map((e) => e.history!.ip.events_1h)).toEqual([1, 2, 3, 4, 5]);
    expect(seen.map((e) => e.history!.ip.accounts_24h)).toEqual([1, 2, 3, 4, 5]);
    expect(seen.map((e) => e.rules.includes('Many events from this IP address'))).toEqual([false, false, false, false, true]);
    // Each address is new to this account: first seen now, one event.
    expect(seen[4]!.history!.email).toMatchObject({ events_24h: 1, devices_30d: 0, first_seen: new Date(clock.now() - MINUTE).toISOString() });
    expect(seen[4]!.unavailable).not.toContain('store');

    clock.advance(2 * HOUR);
    const later = await evaluate(t, { event_type: 'account_register', email: 'signup6@example.com' });
    expect(later.history!.ip).toEqual({ events_1h: 1, events_24h: 6, accounts_24h: 6 });
    expect(later.rules).not.toContain('Many events from this IP address');
  });

  it('one device behind four accounts: device_multi_account fires on the fourth, the same account again adds none', async () => {
    const { t, clock } = await start(engine);
    const results = [];
    for (const user of ['ann', 'bob', 'cat', 'cat', 'dan']) {
      results.push(await evaluate(t, { event_type: 'account_register', email: `${user}@example.com`, ip: `81.2.69.${results.length + 1}`, device_intelligence: { device_hash: device(1) } }));
      clock.advance(10 * MINUTE);
    }
    expect(results.map((r) => r.history!.device!.accounts_30d)).toEqual([1, 2, 3, 3, 4]);
    expect(results.map((r) => r.rules.includes('Device used by many accounts'))).toEqual([false, false, false, false, true]);
    expect(results[4]!.history!.device!.first_seen).toBe(new Date(clock.now() - 50 * MINUTE).toISOString());
    expect(results[3]!.history!.email.devices_30d).toBe(1);
  });

  it('London, then a minute later Sydney: impossible travel and a new country; through a VPN exit, speed but no rule', async () => {
    const { t, clock } = await start(engine);
    const user = { user_id: 'traveller' };
    const first = await evaluate(t, { user, ip: PLACES.london, device_intelligence: { device_hash: device(7) } });
    // The first event: nothing to compare with.
    expect(first.history!.user).toMatchObject({ new_device: null, new_country: null, previous: null, devices_30d: 1, countries_24h: 1 });
    expect(first.rules).toEqual([]);

    clock.advance(MINUTE);
    const second = await evaluate(t, { user, ip: PLACES.sydney, device_intelligence: { device_hash: device(7) } });
    const previous = second.history!.user!.previous!;
    expect(previous).toMatchObject({ at: new Date(clock.now() - MINUTE).toISOString(), country_code: 'GB', same_network: false, anonymous: false });
    // 16,990 km between the points, less both accuracy radii (10 + 20 km); in one minute.
    expect(previous.distance_km).toBeGreaterThan(16_900);
    expect(previous.distance_km).toBeLessThan(17_000);
    // Over one minute: sixty times the distance an hour.
    expect(Math.abs(previous.speed_kmh! - previous.distance_km! * 60)).toBeLessThanOrEqual(60);
    expect(second.history!.user).toMatchObject({ new_device: false, new_country: true, countries_24h: 2 });
    expect(second.rules).toEqual(expect.arrayContaining(['Impossible travel', 'New country for this user']));
    expect(second.rules).not.toContain('New device for this user');
    expect(second.state).toBe('decline');

    // A VPN exit is its own signal: the speed is measured, the rule does not call it travel.
    clock.advance(MINUTE);
    const vpn = await evaluate(t, { user, ip: PLACES.sydneyVpn, device_intelligence: { device_hash: device(7) } });
    expect(vpn.history!.user!.previous).toMatchObject({ country_code: 'AU', anonymous: true, same_network: false });
    expect(vpn.rules).not.toContain('Impossible travel');

    // Two addresses of one network in one country are not travel either (a carrier re-routing).
    const { t: other, clock: c2 } = await start(engine);
    await evaluate(other, { user, ip: PLACES.london });
    c2.advance(1000);
    const rerouted = await evaluate(other, { user, ip: PLACES.manchester });
    expect(rerouted.history!.user!.previous).toMatchObject({ same_network: true });
    expect(rerouted.history!.user!.previous!.speed_kmh).toBeGreaterThan(1000);
    expect(rerouted.rules).not.toContain('Impossible travel');
  });

  it('the same user back on a known device: new once, known after, counted once', async () => {
    const { t, clock } = await start(engine);
    const user = { user_id: 'regular' };
    const at = async (d: number) => {
      clock.advance(HOUR);
      return evaluate(t, { user, device_intelligence: { device_hash: device(d) } });
    };
    const first = await at(1);
    const newPhone = await at(2);
    const back = await at(1);
    expect([first, newPhone, back].map((e) => e.history!.user!.new_device)).toEqual([null, true, false]);
    expect([first, newPhone, back].map((e) => e.history!.user!.devices_30d)).toEqual([1, 2, 2]);
    expect(newPhone.rules).toEqual(['New device for this user']);
    expect(back.rules).toEqual([]);
    expect(back.history!.user!.new_country).toBe(false);
    expect(back.history!.user!.first_seen).toBe(new Date(clock.now() - 2 * HOUR).toISOString());
  });

  it('erasure: the person\'s history, evaluations and labels go, and their next event is a first one', async () => {
    const { t, clock } = await start(engine);
    const person = { email: 'erase.me@example.com', user: { user_id: 'erase-me' }, device_intelligence: { device_hash: device(3) } };
    const start0 = clock.now();
    const first = await evaluate(t, person);
    clock.advance(HOUR);
    await evaluate(t, person);
    await evaluate(t, { email: 'someone.else@example.com', device_intelligence: { device_hash: device(3) } });
    await t.app.store.log.flush();
    expect((await t.app.inject({ method: 'POST', url: `/v1/risk/evaluations/${first.id}/feedback`, headers: bearer(KEY_A), payload: { label: 'legit' } })).statusCode).toBe(200);

    const erased = await t.app.inject({ method: 'POST', url: '/v1/risk/erase', headers: bearer(KEY_A), payload: { user_id: 'erase-me', email: 'Erase.Me@example.com' } });
    expect(erased.statusCode, erased.body).toBe(200);
    const { removed } = erased.json();
    expect(removed.evaluations).toBe(2);
    expect(removed.labels).toBe(1);
    // The user's row and the e-mail's; their counters; their devices, countries, and their place among the IP's and the device's accounts.
    expect(removed.history.identifiers).toBe(2);
    expect(removed.history.counters).toBeGreaterThanOrEqual(1);
    expect(removed.history.memberships).toBeGreaterThanOrEqual(4);
    const remaining = await t.app.store.engine.db.selectFrom('evaluations').select('email').execute();
    expect(remaining.map((r) => r.email)).toEqual(['someone.else@example.com']);
    expect(await t.app.store.audit({ account: 'default' })).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'person.erase', target: null })]));

    clock.advance(HOUR);
    const again = await evaluate(t, person);
    expect(again.history!.user).toMatchObject({ first_seen: new Date(clock.now()).toISOString(), previous: null, new_device: null, devices_30d: 1 });
    expect(again.history!.email.first_seen).toBe(new Date(clock.now()).toISOString());
    expect(again.history!.email.events_24h).toBe(1);
    // The device and the IP are not the person's: their counters stay, without the person among their accounts.
    expect(again.history!.device!.accounts_30d).toBe(2);
    expect(again.history!.device!.first_seen).toBe(new Date(start0).toISOString());
    expect(again.history!.ip.events_24h).toBe(4);
  });

  it('feedback: labels the account\'s own evaluation; another account\'s is 404, a bad label 400', async () => {
    const { t } = await start(engine);
    const globex = await t.app.store.accounts.createKey('globex', { actor: 'test', seed: { files: await readRuleFiles('rules'), comment: 'test' } });
    await t.app.reloadConfiguration();
    const mine = await evaluate(t, {});
    const theirs = await evaluate(t, {}, globex.key);
    const feedback = (id: string, key: string, payload: unknown) => t.app.inject({ method: 'POST', url: `/v1/risk/evaluations/${id}/feedback`, headers: bearer(key), payload: payload as object });

    const ok = await feedback(mine.id, KEY_A, { label: 'fraud', reason: 'chargeback' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ evaluation_id: mine.id, label: 'fraud', reason: 'chargeback' });
    const relabelled = await feedback(mine.id, KEY_A, { label: 'legit' });
    expect(relabelled.json()).toMatchObject({ label: 'legit', reason: null });
    expect(await t.app.store.labels.get('default', mine.id)).toMatchObject({ label: 'legit', author: 'api:default' });

    expectProblem(await feedback(theirs.id, KEY_A, { label: 'fraud' }), 404, 'evaluation_not_found');
    expectProblem(await feedback('not-an-id', KEY_A, { label: 'fraud' }), 404, 'evaluation_not_found');
    // An id this replica never queued is not worth a write of its log queue: a stream of made-up ids must not force one each.
    const flush = vi.spyOn(t.app.store.log, 'flush');
    expectProblem(await feedback('019ab8c0-0000-7000-8000-000000000000', KEY_A, { label: 'fraud' }), 404, 'evaluation_not_found');
    expect(flush).not.toHaveBeenCalled();
    flush.mockRestore();
    expect(await t.app.store.labels.get('globex', theirs.id)).toBeUndefined();
    const bad = await feedback(mine.id, KEY_A, { label: 'maybe' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([expect.objectContaining({ path: 'label' })]);
    expect((await feedback(mine.id, 'rk_wrong', { label: 'fraud' })).statusCode).toBe(401);
  });

  it('unknown stays unknown: no user, no device, no location', async () => {
    const { t, clock } = await start(engine);
    const anonymous = await evaluate(t, { ip: PLACES.nowhere });
    expect(anonymous.history!.device).toBeNull();
    expect(anonymous.history!.user).toBeNull();
    // Not sent is absent, a known answer: the user and device rules are false, not unknown.
    expect(anonymous.unavailable.filter((u) => /user_new|travel|sharing|device_multi/.test(u))).toEqual([]);
    expect(anonymous.rules).toEqual([]);

    const user = { user_id: 'somewhere' };
    await evaluate(t, { user, ip: PLACES.nowhere });
    clock.advance(MINUTE);
    const located = await evaluate(t, { user, ip: PLACES.nowhere });
    // Neither place is known: no distance, no speed, no country; the rules say they could not tell.
    expect(located.history!.user).toMatchObject({ new_country: null, countries_24h: 0, new_device: null });
    expect(located.history!.user!.previous).toMatchObject({ country_code: null, distance_km: null, speed_kmh: null });
    expect(located.unavailable).toEqual(expect.arrayContaining(['rule:impossible_travel', 'rule:user_new_country']));
    expect(located.rules).toEqual([]);
  });
});

describe('two replicas on one PostgreSQL', () => {
  it('count one stream of events together', async () => {
    const url = await freshDatabaseUrl('postgres');
    const clock = testClock();
    const a = await behaviourApp(url, clock);
    const b = await behaviourApp(url, clock);
    apps.push(a, b);
    const seen = [];
    for (let i = 0; i < 10; i++) {
      const replica = i % 2 === 0 ? a : b;
      seen.push(await evaluate(replica, { event_type: 'account_register', email: `stream${i % 3}@example.com`, device_intelligence: { device_hash: device(9) } }));
      // A replica's events reach the other once its writer has sent them (every 50 ms).
      await expect.poll(() => replica.app.store.status().history!.pending, { timeout: 5_000, interval: 10 }).toBe(0);
      clock.advance(MINUTE);
    }
    expect(seen.map((e) => e.history!.ip.events_1h)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(seen.map((e) => e.history!.device!.accounts_30d)).toEqual([1, 2, 3, 3, 3, 3, 3, 3, 3, 3]);
    // stream0 at events 1, 4, 7 and 10.
    expect(seen.at(-1)!.history!.email.events_24h).toBe(4);
  });
});
