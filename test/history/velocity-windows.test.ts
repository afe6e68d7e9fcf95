import { describe, expect, it } from 'vitest';
import { grainOf, parseWindow, velocityCounter, velocityPlan } from '../../src/history/velocity.js';

describe('velocity windows and series', () => {
  it('reads a window by the minute up to 2 h, by the hour up to 7 d, by the day to 30 d', () => {
    expect(parseWindow('10m')).toEqual({ minutes: 10 });
    expect(parseWindow('2h')).toEqual({ minutes: 120 });
    expect(parseWindow('7d')).toEqual({ minutes: 10_080 });
    expect(parseWindow('30d')).toEqual({ minutes: 43_200 });
    expect([grainOf(1), grainOf(120), grainOf(121), grainOf(10_080), grainOf(10_081)]).toEqual([1, 1, 60, 60, 1_440]);
    expect(velocityCounter({ name: 'a', key: 'email.domain', window: '7d' }, 'account_register')).toMatchObject({ grain: 60, buckets: 168 });
    expect(velocityCounter({ name: 'a', key: 'email.domain', window: '30d' }, 'account_register')).toMatchObject({ grain: 1_440, buckets: 30 });
  });

  it.each([['0m'], ['1w'], ['1.5h'], ['h'], ['31d'], ['150m'], ['8d1h'], ['170h']])('refuses %s', (text) => {
    expect(parseWindow(text)).toHaveProperty('problem');
  });

  it('shares a series between counters that count the same (names and windows aside), not otherwise', () => {
    const c = (name: string, window: string, eventTypes?: string[]) => velocityCounter({ name, key: 'email.domain', window, event_types: eventTypes }, 'account_register');
    expect(c('a', '10m').series).toBe(c('b', '1h').series);
    expect(c('a', '1h').series).not.toBe(c('a', '3h').series);
    expect(c('a', '1h').series).not.toBe(c('a', '1h', ['account_login']).series);
    expect(c('a', '1h', ['account_register']).series).toBe(c('a', '1h').series);
  });

  it('counts each series once, for its longest window, and only for the event types it counts', () => {
    const short = velocityCounter({ name: 'a', key: 'email.domain', window: '10m' }, 'account_register');
    const long = velocityCounter({ name: 'b', key: 'email.domain', window: '1h' }, 'account_register');
    const logins = velocityCounter({ name: 'c', key: 'user.user_id', window: '1h', event_types: ['account_login'] }, 'account_register');
    expect(velocityPlan('account_register', [short, long, logins], [short, long, logins])).toEqual({ reads: [short, long, logins], counts: [long] });
    expect(velocityPlan('account_login', [], [short, long, logins])).toEqual({ reads: [], counts: [logins] });
    expect(velocityPlan('password_reset', [], [short, long, logins])).toBeNull();
  });
});
