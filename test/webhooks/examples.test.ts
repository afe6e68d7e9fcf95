import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { freePort } from '../support/process.js';
import { PYTHON } from '../support/python.js';

const RULES = 'thresholds: { review: 20, decline: 40 }\nrules:\n  - id: decline_range\n    name: Decline range\n    score: 50\n    when: { field: ip.address, cidr: [198.51.100.0/24] }\n';

/**
 * The receivers in examples/ (Node and Python), run as a reader runs them, verify what the service
 * really sends: an endpoint pointed at each, a declined evaluation, the app's worker delivering
 * evaluation.declined; the example answers 204 only to a signature it verified, and prints it.
 * After a rotation (two signatures, the example still on the old secret) it verifies too; an
 * endpoint whose secret the example does not hold is refused with 400.
 */
describe.each([
  { name: 'Node', command: process.execPath, script: 'examples/node/webhook-receiver.mjs' },
  { name: 'Python', command: PYTHON, script: 'examples/python/webhook_receiver.py' },
])('the $name example receiver against real deliveries', ({ command, script }) => {
  let t: TestApp;
  let child: ChildProcess;
  let output = '';
  let url: string;
  let secret: string;
  let endpointId: string;

  beforeAll(async () => {
    const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    writeFileSync(join(rules, 'signup.yaml'), RULES);
    t = await startTestApp({ RULES_DIR: rules, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_SECRET_KEY: 'a webhook secret key of at least 32 characters' });
    const port = await freePort();
    url = `http://127.0.0.1:${port}/hooks`;
    const created = await t.app.store.webhookEndpoints.create('default', { url, events: ['evaluation.declined'] }, { actor: 'test' });
    ({ secret } = created);
    endpointId = created.endpoint.id;
    child = spawn(command, [script], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the example did not start: ${output}`)), 15_000);
      child.stdout!.on('data', () => { if (output.includes('listening')) { clearTimeout(timer); resolve(); } });
    });
  });
  afterAll(async () => {
    child?.kill();
    await t?.app.close();
  });

  /** The example prints its line as it answers: waited for as output, not slept out. */
  const printed = (text: string) => new Promise<void>((resolve) => {
    if (output.includes(text)) return resolve();
    child.stdout!.on('data', () => { if (output.includes(text)) resolve(); });
  });

  const declineAndDeliver = async () => {
    const answer = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ event_type: 'signup', ip: '198.51.100.20' }) });
    expect(answer.json().score.state).toBe('decline');
    await t.app.store.log.flush();
    await t.app.webhooks.tick();
    const [delivery] = await t.app.store.webhookQueue.list('default', endpointId, { limit: 1 });
    return delivery!;
  };

  it('verifies a real evaluation.declined delivery, and one signed with two secrets after a rotation', async () => {
    const first = await declineAndDeliver();
    expect(first).toMatchObject({ type: 'evaluation.declined', status: 'delivered', last_status_code: 204 });
    await printed(`verified evaluation.declined ${first.id}`);

    await t.app.store.webhookEndpoints.rotate('default', endpointId, { actor: 'test' });
    const second = await declineAndDeliver();
    expect(second).toMatchObject({ status: 'delivered', last_status_code: 204 });
    await printed(`verified evaluation.declined ${second.id}`);
  });

  it('refuses a delivery signed with a secret it does not hold', async () => {
    const other = await t.app.store.webhookEndpoints.create('default', { url, events: ['review.resolved'] }, { actor: 'test' });
    const id = await t.app.store.webhookQueue.enqueueTest('default', other.endpoint.id, Date.now(), { actor: 'test' });
    expect(await t.app.webhooks.sendNow(id)).toMatchObject({ outcome: 'failed', status_code: 400, error: 'status 400' });
    expect(output).not.toContain(id);
  });
});
