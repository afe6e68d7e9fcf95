import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_A, startTestApp, type TestApp } from '../support/app.js';

/**
 * The client examples in examples/ run against the real app on a real port, as a reader would run
 * them: each prints the decision and exits 0, prints the problem and exits 1 on a refusal, and
 * exits 2 when nothing answers.
 */

const run = promisify(execFile);
const hasPython = spawnSync('python3', ['--version']).status === 0;

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(() => t.app.close());

const CLIENTS = [
  { name: 'Node', command: process.execPath, script: 'examples/node/evaluate.mjs', present: true },
  { name: 'Python', command: 'python3', script: 'examples/python/evaluate.py', present: hasPython },
];

async function client(command: string, script: string, args: string[], env: Record<string, string>) {
  return run(command, [script, ...args], { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe.each(CLIENTS)('the $name example', ({ command, script, present }) => {
  it.skipIf(!present)('prints the decision the service took, with the evaluation id and request id', async () => {
    const result = await client(command, script, ['81.2.69.160', 'jane.doe@example.com'], { RISK_API_URL: url, RISK_API_KEY: KEY_A });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [summary] = result.stdout.split('\n');
    const match = /^(approve|review|decline): fraud score (\d+) \(evaluation (\S+), request (\S+)\)$/.exec(summary!);
    expect(match, summary).not.toBeNull();
    // The service logged the same request, under the id the client sent, with the same evaluation.
    const line = t.logs.lines.find((l) => l.request_id === match![4]);
    expect(line).toMatchObject({ status: 200, evaluation: { id: match![3], state: match![1], fraud_score: Number(match![2]) } });
    // No DNS answers in this test: the client shows what could not be checked.
    expect(result.stdout).toContain('could not check: email.mx');
  });

  it.skipIf(!present)('prints the problem and exits 1 when the service refuses', async () => {
    const wrongKey = await client(command, script, ['81.2.69.160', 'jane.doe@example.com'], { RISK_API_URL: url, RISK_API_KEY: 'not-a-key' });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('refused: 401 unauthorized');
    const badField = await client(command, script, ['1.2.3', 'jane.doe@example.com'], { RISK_API_URL: url, RISK_API_KEY: KEY_A });
    expect(badField.code).toBe(1);
    expect(badField.stderr).toMatch(/refused: 400 invalid_request.*\n {2}ip: /);
  });

  it.skipIf(!present)('exits 2 when nothing answers', async () => {
    const result = await client(command, script, ['81.2.69.160', 'jane.doe@example.com'], { RISK_API_URL: 'http://127.0.0.1:9', RISK_API_KEY: KEY_A });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^no answer \(request [0-9a-f-]{36}\)/);
  });
});
