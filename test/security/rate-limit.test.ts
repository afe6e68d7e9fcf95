import { afterEach, describe, expect, it, vi } from 'vitest';
import { run as keysCli } from '../../src/cli/keys.js';
import { bearer, evaluationBody, KEY_A, KEY_B, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation, expectProblem } from '../support/contract.js';
import { freshDatabaseUrl } from '../support/store.js';

/** The limit is per account: one account's flood never costs another its answers. */
let t: TestApp | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await t?.app.close();
  t = undefined;
});

const WINDOW_MS = 60_000;

const evaluate = (key: string) =>
  t!.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key), payload: evaluationBody() });

/** Two accounts in a store, one key each, made by the real key tool. */
async function twoAccounts(): Promise<{ url: string; acme: string; globex: string }> {
  const url = await freshDatabaseUrl('sqlite');
  const printed: string[] = [];
  const quiet = () => {};
  const env = { DATABASE_URL: url, RULES_DIR: 'rules' };
  await keysCli(['create', '--account', 'acme'], (l) => printed.push(l), quiet, env);
  await keysCli(['create', '--account', 'globex'], (l) => printed.push(l), quiet, env);
  return { url, acme: printed[0]!, globex: printed[1]! };
}

describe('rate limiting per account', () => {
  it('keeps a separate bucket for each account, and says when to retry', async () => {
    const { url, acme, globex } = await twoAccounts();
    t = await startTestApp({ API_KEYS: '', DATABASE_URL: url, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
    for (let i = 0; i < 3; i++) expectEvaluation(await evaluate(acme));
    const limited = await evaluate(acme);
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_MS / 1000);

    // acme is out of requests; globex has all of its own.
    for (let i = 0; i < 3; i++) expectEvaluation(await evaluate(globex));
    expectProblem(await evaluate(globex), 429, 'rate_limited');
  });

  it('counts the two keys of one account in the same bucket', async () => {
    t = await startTestApp({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
    expectEvaluation(await evaluate(KEY_A));
    expectEvaluation(await evaluate(KEY_B));
    expectProblem(await evaluate(KEY_A), 429, 'rate_limited');
    expectProblem(await evaluate(KEY_B), 429, 'rate_limited');
  });

  it('refills when the window has passed (time moved by the test, not waited for)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-21T12:00:00Z') });
    t = await startTestApp({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
    expectEvaluation(await evaluate(KEY_A));
    vi.setSystemTime(new Date('2026-11-21T12:00:30Z'));
    const limited = await evaluate(KEY_A);
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBe(30);
    vi.setSystemTime(new Date('2026-11-21T12:01:00Z'));
    expectEvaluation(await evaluate(KEY_A));
  });

  it('does not spend an account’s budget on requests with a wrong key', async () => {
    t = await startTestApp({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
    for (let i = 0; i < 5; i++) expectProblem(await evaluate('rk_' + 'z'.repeat(43)), 401, 'unauthorized');
    expectEvaluation(await evaluate(KEY_A));
  });
});
