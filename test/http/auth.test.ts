import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run as keysCli } from '../../src/cli/keys.js';
import { hashKey, keyIdOf } from '../../src/keys/key.js';
import { bearer, evaluationBody, KEY_A, KEY_B, startTestApp, type TestApp } from '../support/app.js';
import { freshDatabaseUrl } from '../support/store.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

const evaluate = (app: TestApp['app'], headers: Record<string, string>) =>
  app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers, payload: evaluationBody() });

describe('bearer authentication', () => {
  it('accepts both keys of the account at once', async () => {
    t = await startTestApp();
    expect((await evaluate(t.app, bearer(KEY_A))).statusCode).toBe(200);
    expect((await evaluate(t.app, bearer(KEY_B))).statusCode).toBe(200);
  });

  it('reads the scheme case-insensitively (RFC 9110 §11.1)', async () => {
    t = await startTestApp();
    expect((await evaluate(t.app, { authorization: `bearer ${KEY_A}` })).statusCode).toBe(200);
  });

  it.each([
    ['a missing header', {}],
    ['a wrong key', bearer('rk_' + 'x'.repeat(43))],
    ['a Basic credential', { authorization: `Basic ${Buffer.from(`user:${KEY_A}`).toString('base64')}` }],
    ['a bearer with no key', { authorization: 'Bearer ' }],
  ])('refuses %s with 401, WWW-Authenticate and a problem', async (_name, headers) => {
    t = await startTestApp();
    const response = await evaluate(t.app, headers as Record<string, string>);
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.json()).toMatchObject({ status: 401, code: 'unauthorized', type: 'urn:risk-evaluation:problem:unauthorized' });
  });

  it('never writes a key to the log', async () => {
    t = await startTestApp();
    await evaluate(t.app, bearer(KEY_A));
    await evaluate(t.app, bearer('rk_wrong_' + 'y'.repeat(40)));
    const all = t.logs.raw.join('\n');
    expect(all).not.toContain(KEY_A);
    expect(all).not.toContain('y'.repeat(40));
    expect(all).not.toContain('jane.doe');
  });
});

describe('keys from the environment', () => {
  it('refuses a key shorter than 32 characters at start-up, naming API_KEYS', async () => {
    await expect(startTestApp({ API_KEYS: 'short-key' })).rejects.toThrow(/API_KEYS: key 1 is 9 characters/);
  });

  it('refuses a third key at start-up', async () => {
    await expect(startTestApp({ API_KEYS: [KEY_A, KEY_B, KEY_A + 'x'].join(',') })).rejects.toThrow(/at most 2 keys/);
  });

  // Regression (hardening finding 15): a key with a character no Authorization header can carry was
  // accepted at start and could then never match a request.
  it.each([
    ['a non-ASCII character', `${KEY_A.slice(0, 40)}é`],
    ['a space inside', `${KEY_A.slice(0, 20)} ${KEY_A.slice(20)}`],
    ['a quote', `${KEY_A}"`],
  ])('refuses a key with %s at start-up, naming API_KEYS', async (_name, key) => {
    await expect(startTestApp({ API_KEYS: key })).rejects.toThrow(/API_KEYS: key 1 has characters an Authorization: Bearer header cannot carry/);
  });
});

describe('keys in the store, managed with the CLI', () => {
  const quiet = () => {};
  let url: string;
  let printed: string[];
  let errors: string[];
  const cli = (...args: string[]) => keysCli(args, (l) => printed.push(l), (l) => errors.push(l), { DATABASE_URL: url, RULES_DIR: 'rules' });

  beforeEach(async () => {
    url = await freshDatabaseUrl('sqlite');
    printed = [];
    errors = [];
  });

  it('invalidates the replaced key in a running instance without a restart', async () => {
    expect(await cli('create', '--account', 'acme')).toBe(0);
    expect(await cli('create', '--account', 'acme')).toBe(0);
    const [first, second] = printed.splice(0);
    t = await startTestApp({ API_KEYS: '', DATABASE_URL: url });
    expect((await evaluate(t.app, bearer(first!))).statusCode).toBe(200);
    expect((await evaluate(t.app, bearer(second!))).statusCode).toBe(200);

    const listed: string[] = [];
    await keysCli(['list'], (l) => listed.push(l), quiet, { DATABASE_URL: url });
    const firstId = listed[1]!.trim().split(/\s+/)[0]!;
    expect(await cli('rotate', '--account', 'acme', '--key', firstId)).toBe(0);
    const replacement = printed.splice(0)[0]!;
    expect((await evaluate(t.app, bearer(first!))).statusCode).toBe(200); // not read yet

    // The service polls every RELOAD_INTERVAL_MS; the test asks it to read now instead of waiting.
    await t.app.reloadConfiguration();
    expect((await evaluate(t.app, bearer(first!))).statusCode).toBe(401);
    expect((await evaluate(t.app, bearer(second!))).statusCode).toBe(200);
    expect((await evaluate(t.app, bearer(replacement))).statusCode).toBe(200);
  });

  it('stores only hashes, lists keys by id and prefix, and refuses a third key', async () => {
    await cli('create', '--account', 'acme');
    await cli('create', '--account', 'acme');
    await expect(cli('create', '--account', 'acme')).rejects.toThrow(/already has 2 keys/);
    const path = url.slice('sqlite:'.length);
    const bytes = [path, `${path}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString('latin1')).join('');
    for (const key of printed) {
      expect(bytes).not.toContain(key);
      expect(bytes).toContain(hashKey(key));
    }
    const listed: string[] = [];
    await keysCli(['list'], (l) => listed.push(l), quiet, { DATABASE_URL: url });
    expect(listed[0]).toMatch(/^acme {2}active {2}created /);
    expect(listed.slice(1)).toEqual(printed.map((key) => expect.stringContaining(`${keyIdOf(hashKey(key))}  ${key.slice(0, 9)}…  created `)));
    expect(listed.join('\n')).not.toContain(printed[0]!.slice(9));
  });

  it('records when a key was last used, off the request path', async () => {
    await cli('create', '--account', 'acme');
    const key = printed[0]!;
    t = await startTestApp({ API_KEYS: '', DATABASE_URL: url });
    expect((await evaluate(t.app, bearer(key))).statusCode).toBe(200);
    const [before] = (await t.app.store.accounts.get('acme'))!.keys;
    expect(before!.last_used_at).toBeNull();
    await t.app.close(); // the minute's write also happens on shutdown
    t = undefined;
    const listed: string[] = [];
    await keysCli(['list'], (l) => listed.push(l), quiet, { DATABASE_URL: url });
    expect(listed[1]).toMatch(/last used \d{4}-\d\d-\d\dT/);
  });

  // Regression (hardening finding 15): the CLI took `--rules-dir ../../../../etc` and the service then
  // read that directory. Accounts no longer point at directories; the option is refused.
  it('refuses --rules-dir and any other option it does not know', async () => {
    await expect(cli('create', '--account', 'acme', '--rules-dir', '../../../../etc')).rejects.toThrow(/Unknown option '--rules-dir'/);
    await expect(cli('create', '--account', 'acme', '--file', 'accounts.json')).rejects.toThrow(/Unknown option '--file'/);
    expect(printed).toEqual([]);
  });

  // Regression (hardening finding 15): an accounts-file account named `default` was a second account
  // that shared the API_KEYS account's rate-limit bucket. Now `default` is one account: API_KEYS' keys
  // and the stored ones serve it together, within the limit of two.
  it('treats a stored account "default" as the API_KEYS account, two keys in all', async () => {
    t = await startTestApp({ API_KEYS: KEY_A, DATABASE_URL: url });
    await t.app.close();
    t = undefined;
    expect(await cli('create', '--account', 'default')).toBe(0);
    await expect(cli('create', '--account', 'default')).rejects.toThrow(/already has 2 keys \(1 of them in API_KEYS\)/);
    t = await startTestApp({ API_KEYS: KEY_A, DATABASE_URL: url, RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' });
    expect((await evaluate(t.app, bearer(KEY_A))).statusCode).toBe(200);
    expect((await evaluate(t.app, bearer(printed[0]!))).statusCode).toBe(200);
    expect((await evaluate(t.app, bearer(KEY_A))).statusCode).toBe(429);
    await t.app.close();
    t = undefined;
    // Two keys in API_KEYS and one in the store would be three: the start is refused, naming both sources.
    await expect(startTestApp({ API_KEYS: `${KEY_A},${KEY_B}`, DATABASE_URL: url })).rejects.toThrow(/API_KEYS has 2 key\(s\) and the store 1 live key\(s\).*at most 2 in all/);
  });
});
