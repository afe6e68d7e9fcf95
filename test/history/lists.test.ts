import { afterEach, describe, expect, it } from 'vitest';
import { run as listsCli } from '../../src/cli/lists.js';
import type { TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';
import { behaviourApp, device, evaluate, testClock } from './fixtures.js';

/**
 * Lists through the CLI and HTTP: added with `npm run lists`, served from memory after the store's
 * change counter moves, matched by every spelling a request can take.
 */
let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

const cli = async (url: string, ...argv: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await listsCli(argv, (l) => out.push(l), (l) => err.push(l), { DATABASE_URL: url, RULES_DIR: 'rules' });
  return { code, out, err };
};

describe.each(ENGINES)('lists (%s)', (engine) => {
  it('block and allow entries decide, by every spelling of the request; expired entries do not', async () => {
    const url = await freshDatabaseUrl(engine);
    const clock = testClock(Date.now());
    t = await behaviourApp(url, clock);
    const add = (...args: string[]) => cli(url, 'add', ...args);
    expect((await add('--list', 'block', '--kind', 'ip', '--value', '203.0.113.0/24', '--reason', 'card testing')).code).toBe(0);
    expect((await add('--list', 'block', '--kind', 'domain', '--value', 'Spam.Example', '--reason', 'throw-away')).code).toBe(0);
    expect((await add('--list', 'block', '--kind', 'device', '--value', device(4), '--reason', 'farm', '--days', '1')).code).toBe(0);
    expect((await add('--list', 'allow', '--kind', 'email', '--value', 'Jane.Doe@gmail.com', '--reason', 'VIP')).code).toBe(0);
    expect((await add('--list', 'allow', '--kind', 'user', '--value', 'u-42', '--reason', 'staff')).code).toBe(0);
    // Refused as the CLI's entry reports it (exit 1 with the message).
    await expect(add('--list', 'block', '--kind', 'ip', '--value', '203.0.113', '--reason', 'x')).rejects.toThrow('value: not an IP address or CIDR range');
    await t.app.reloadConfiguration();

    // An IPv6 address that carries an IPv4 client (NAT64) is checked as that address too.
    const nat64 = await evaluate(t, { ip: '64:ff9b::203.0.113.9' });
    expect(nat64.lists.block).toEqual([expect.objectContaining({ kind: 'ip', value: '203.0.113.0/24', reason: 'card testing' })]);
    expect(nat64.rules).toContain("On the account's block list");
    expect(nat64.state).toBe('decline');
    // A domain lists its subdomains.
    expect((await evaluate(t, { email: 'x@mail.spam.example' })).lists.block).toEqual([expect.objectContaining({ kind: 'domain', value: 'spam.example' })]);
    // The canonical form: dots and +tags at Gmail are one mailbox.
    const allowed = await evaluate(t, { email: 'janedoe+shop@gmail.com', event_type: 'account_register' });
    expect(allowed.lists.allow).toEqual([expect.objectContaining({ kind: 'email', value: 'jane.doe@gmail.com' })]);
    expect(allowed.rules).toContain("On the account's allow list");
    expect((await evaluate(t, { user: { user_id: 'u-42' } })).lists.allow).toHaveLength(1);
    expect((await evaluate(t, {})).lists).toEqual({ block: [], allow: [] });

    const blockedDevice = { device_intelligence: { device_hash: device(4) } };
    expect((await evaluate(t, blockedDevice)).lists.block).toHaveLength(1);
    clock.advance(2 * 86_400_000);
    expect((await evaluate(t, blockedDevice)).lists.block).toEqual([]);

    const listed = await cli(url, 'list');
    expect(listed.out).toHaveLength(5);
    const id = listed.out.find((l) => l.includes('203.0.113.0/24'))!.split(' ')[0]!;
    expect((await cli(url, 'remove', '--id', id)).code).toBe(0);
    await t.app.reloadConfiguration();
    expect((await evaluate(t, { ip: '203.0.113.9' })).lists.block).toEqual([]);
    const audit = await t.app.store.audit({ account: 'default' });
    expect(audit.filter((a) => a.action.startsWith('list.')).map((a) => a.action)).toEqual(['list.remove', ...Array(5).fill('list.add')]);
  });
});
