import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { run as keysCli } from '../../src/keys/cli.js';
import { createKeyStore } from '../../src/keys/key-store.js';
import { bearer, evaluationBody, KEY_A, KEY_B, startTestApp, type TestApp } from '../support/app.js';

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
});

describe('rotation through the CLI', () => {
  const quiet = () => {};

  it('invalidates the replaced key in a running instance without a restart', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'risk-keys-')), 'accounts.json');
    const printed: string[] = [];
    const cli = (...args: string[]) => keysCli([...args, '--file', file], (l) => printed.push(l), quiet);

    expect(await cli('create', '--account', 'acme')).toBe(0);
    expect(await cli('create', '--account', 'acme')).toBe(0);
    const [first, second] = printed.splice(0);
    // The production key store, polling on its own; the test asks it to look now instead of waiting for the poll.
    const keys = await createKeyStore({ apiKeys: [], accountsFile: file, reloadIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    t = await startTestApp({ API_KEYS: '', ACCOUNTS_FILE: file }, { keys });
    expect((await evaluate(t.app, bearer(first!))).statusCode).toBe(200);
    expect((await evaluate(t.app, bearer(second!))).statusCode).toBe(200);

    const listed: string[] = [];
    await keysCli(['list', '--file', file], (l) => listed.push(l), quiet);
    const firstId = listed[1]!.trim().split(/\s+/)[0]!;
    expect(await cli('rotate', '--account', 'acme', '--key', firstId)).toBe(0);
    const replacement = printed.splice(0)[0]!;
    expect((await evaluate(t.app, bearer(first!))).statusCode).toBe(200); // not read yet

    await keys.checkForChanges();
    expect((await evaluate(t.app, bearer(first!))).statusCode).toBe(401);
    expect((await evaluate(t.app, bearer(second!))).statusCode).toBe(200);
    expect((await evaluate(t.app, bearer(replacement))).statusCode).toBe(200);
  });

  it('stores only hashes and refuses a third key', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'risk-keys-')), 'accounts.json');
    const printed: string[] = [];
    const errors: string[] = [];
    const cli = (...args: string[]) => keysCli([...args, '--file', file], (l) => printed.push(l), (l) => errors.push(l));
    await cli('create', '--account', 'acme');
    await cli('create', '--account', 'acme');
    await expect(cli('create', '--account', 'acme')).rejects.toThrow(/already has 2 keys/);
    const { readFileSync } = await import('node:fs');
    const stored = readFileSync(file, 'utf8');
    for (const key of printed) expect(stored).not.toContain(key);
    expect(stored).toMatch(/"hash": "sha256:[0-9a-f]{64}"/);
  });

  it('keeps serving the last good accounts file when a broken one replaces it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'risk-keys-')), 'accounts.json');
    const printed: string[] = [];
    await keysCli(['create', '--account', 'acme', '--file', file], (l) => printed.push(l), quiet);
    const keys = await createKeyStore({ apiKeys: [], accountsFile: file, reloadIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    t = await startTestApp({ API_KEYS: '', ACCOUNTS_FILE: file }, { keys });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, '{"accounts": [ {"id": "acme", "keys": [{"id":"k","hash":"plaintext-key"');
    await keys.checkForChanges();
    const sources = t.app.sources();
    expect(sources.find((s) => s.name === 'keys.accounts_file')!.error).toMatch(/accounts\.json: is not valid JSON/);
    expect((await evaluate(t.app, bearer(printed[0]!))).statusCode).toBe(200);
  });
});
