import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as keysCli } from '../../src/cli/keys.js';
import { run as rulesCli } from '../../src/cli/rules.js';
import { evaluationBody } from '../support/app.js';
import { startServiceProcess, type ServiceProcess } from '../support/process.js';
import { ENGINES, freshDatabaseUrl, openTestStore, type EngineName } from '../support/store.js';

/** What the store holds outlives the process: accounts, keys, rule set versions and the evaluation log. */
let service: ServiceProcess | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

const evaluate = async (key: string) => {
  const response = await fetch(`${service!.url}/v1/risk/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(evaluationBody({ ip: '203.0.113.9' })),
  });
  return { status: response.status, body: (await response.json()) as { id: string; score: { fraud_score: number } } };
};

describe.each(ENGINES)('a restart on %s', (engine: EngineName) => {
  it('keeps accounts, keys, rule set versions and the evaluation log', async () => {
    const url = await freshDatabaseUrl(engine);
    const env = { DATABASE_URL: url, RULES_DIR: 'rules' };
    const printed: string[] = [];
    await keysCli(['create', '--account', 'acme'], (l) => printed.push(l), () => {}, env);
    const key = printed[0]!;
    const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    writeFileSync(join(rules, 'account_register.yaml'), 'rules:\n  - id: test_range\n    name: Test range\n    score: 30\n    when: { field: ip.address, cidr: 203.0.113.0/24 }\n');
    await rulesCli(['apply', rules, '--account', 'acme', '--comment', 'test range'], () => {}, () => {}, env);

    service = await startServiceProcess({ API_KEYS: '', DATABASE_URL: url });
    const first = await evaluate(key);
    expect(first).toMatchObject({ status: 200, body: { score: { fraud_score: 30 } } });
    expect(await service.stop()).toBe(0);

    service = await startServiceProcess({ API_KEYS: '', DATABASE_URL: url });
    const second = await evaluate(key);
    expect(second).toMatchObject({ status: 200, body: { score: { fraud_score: 30 } } });
    expect(await service.stop()).toBe(0);
    service = undefined;

    const store = await openTestStore({ url }, { writeLog: false });
    try {
      expect((await store.accounts.get('acme'))!.keys).toHaveLength(1);
      expect((await store.ruleSets.list('acme', 'account_register')).map((v) => [v.version, v.status])).toEqual([[2, 'published'], [1, 'archived']]);
      const logged = await store.engine.db.selectFrom('evaluations').select(['id', 'account_id', 'fraud_score', 'rule_set_version']).orderBy('id').execute();
      const live = (await store.ruleSets.published('acme')).find((v) => v.event_type === 'account_register')!.id;
      expect(logged).toEqual([
        { id: first.body.id, account_id: 'acme', fraud_score: 30, rule_set_version: live },
        { id: second.body.id, account_id: 'acme', fraud_score: 30, rule_set_version: live },
      ]);
    } finally {
      await store.close();
    }
  }, 120_000);
});
