import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as keysCli } from '../../src/cli/keys.js';
import { generateKey, hashKey, keyIdOf } from '../../src/keys/key.js';
import { freePort } from '../support/process.js';
import { bearer, evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { freshDatabaseUrl } from '../support/store.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

/** A store the service cannot use stops the start with a message naming DATABASE_URL, never a password. */
describe('a store the service cannot use', () => {
  const tempFile = (content: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'risk-store-')), 'risk.sqlite');
    writeFileSync(path, content);
    return path;
  };

  it('refuses a file that is not a SQLite database', async () => {
    const path = tempFile('this is not a database, it is a text file that happens to be here\n'.repeat(100));
    await expect(startTestApp({ DATABASE_URL: `sqlite:${path}` })).rejects.toThrow(
      `DATABASE_URL (sqlite:${path}): ${path} is not a SQLite database or is corrupt (file is not a database); restore it from a backup (README "Store")`,
    );
  });

  it('refuses a file it cannot open for writing', async () => {
    // As root no permission bit stops a write; /proc refuses every new file whoever asks.
    await expect(startTestApp({ DATABASE_URL: 'sqlite:/proc/risk.sqlite' })).rejects.toThrow(
      /^DATABASE_URL \(sqlite:\/proc\/risk\.sqlite\): \/proc\/risk\.sqlite cannot be opened for writing \(.+\); the service needs to write the file and its directory$/,
    );
  });

  it('refuses a directory it cannot create', async () => {
    const file = tempFile('');
    await expect(startTestApp({ DATABASE_URL: `sqlite:${file}/risk.sqlite` })).rejects.toThrow(`DATABASE_URL (sqlite:${file}/risk.sqlite): cannot create the directory ${file} (EEXIST)`);
  });

  it('refuses a PostgreSQL that does not answer, without printing the password', async () => {
    const port = await freePort();
    const error = (await startTestApp({ DATABASE_URL: `postgres://risk:hunter2@127.0.0.1:${port}/risk` }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(new RegExp(`^DATABASE_URL \\(postgres://risk:\\*\\*\\*@127\\.0\\.0\\.1:${port}/risk\\): cannot use the database: .*ECONNREFUSED`));
    expect(error.message).not.toContain('hunter2');
  });

  it('stops the real server with exit code 1 and the message in its log', () => {
    const path = tempFile('garbage'.repeat(1000));
    // NODE_ENV=test: the log stays JSON lines (a development start prints for a person).
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { PATH: process.env.PATH, NODE_ENV: 'test', DATABASE_URL: `sqlite:${path}`, API_KEYS: generateKey(), DNS_SERVERS: '127.0.0.1:9', PORT: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    const fatal = result.stdout.split('\n').filter((l) => l.includes('"level":"fatal"')).map((l) => JSON.parse(l) as { msg: string; error: string });
    expect(fatal).toEqual([expect.objectContaining({ msg: 'start-up failed', error: expect.stringMatching(/^DATABASE_URL \(sqlite:.+\): .* is not a SQLite database or is corrupt/) })]);
  }, 60_000);
});

/** An accounts file from before the store: imported once, at start or with the CLI. */
describe('ACCOUNTS_FILE', () => {
  const signup = 'rules:\n  - id: test_range\n    name: Test range\n    score: 30\n    when: { field: ip.address, cidr: 203.0.113.0/24 }\n';
  function accountsFile(): { file: string; key: string; rulesDir: string } {
    const dir = mkdtempSync(join(tmpdir(), 'risk-accounts-'));
    const rulesDir = join(dir, 'rules-acme');
    spawnSync('mkdir', [rulesDir]);
    writeFileSync(join(rulesDir, 'signup.yaml'), signup);
    const key = generateKey();
    const hash = hashKey(key);
    const file = join(dir, 'accounts.json');
    writeFileSync(file, JSON.stringify({ accounts: [{ id: 'acme', rules_dir: rulesDir, keys: [{ id: keyIdOf(hash), hash, created_at: '2026-01-02T03:04:05.000Z' }] }] }));
    return { file, key, rulesDir };
  }
  const signupFrom = (app: TestApp['app'], key: string) =>
    app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload: evaluationBody({ event_type: 'signup', ip: '203.0.113.9' }) });

  it('is imported at the first start, with its rules directories, and not read again', async () => {
    const { file, key } = accountsFile();
    const url = await freshDatabaseUrl('sqlite');
    t = await startTestApp({ API_KEYS: '', DATABASE_URL: url, ACCOUNTS_FILE: file });
    expect((await signupFrom(t.app, key)).json().score.fraud_score).toBe(30);
    expect(t.logs.lines.find((l) => String(l.msg).startsWith('ACCOUNTS_FILE imported'))).toMatchObject({ accounts: [{ id: 'acme', created: true, keysAdded: 1, ruleSets: ['signup v1'] }] });
    await t.app.close();

    t = await startTestApp({ API_KEYS: '', DATABASE_URL: url, ACCOUNTS_FILE: file });
    expect((await signupFrom(t.app, key)).statusCode).toBe(200);
    expect(t.logs.lines.some((l) => l.msg === 'ACCOUNTS_FILE was imported into the store and is no longer read: remove it from the environment')).toBe(true);
    await t.app.close();
    t = undefined;

    // An edit after the import (a rotation the old way) would silently not happen: the start is refused.
    writeFileSync(file, JSON.stringify({ accounts: [] }));
    await expect(startTestApp({ API_KEYS: '', DATABASE_URL: url, ACCOUNTS_FILE: file })).rejects.toThrow(/ACCOUNTS_FILE \(.+accounts\.json\) changed since it was imported into the store on .+; it is no longer read/);
  });

  it('is imported with "npm run keys -- import", again without harm', async () => {
    const { file, key } = accountsFile();
    const url = await freshDatabaseUrl('sqlite');
    const said: string[] = [];
    const cli = () => keysCli(['import', file], () => {}, (l) => said.push(l), { DATABASE_URL: url, RULES_DIR: 'rules' });
    expect(await cli()).toBe(0);
    expect(await cli()).toBe(0);
    expect(said.filter((l) => l.startsWith('acme:'))).toEqual(['acme: created, 1 key(s) added, rule sets signup v1', 'acme: already there, 0 key(s) added, rule sets signup v1 unchanged']);
    t = await startTestApp({ API_KEYS: '', DATABASE_URL: url, ACCOUNTS_FILE: file });
    expect((await signupFrom(t.app, key)).json().score.fraud_score).toBe(30);
  });
});
