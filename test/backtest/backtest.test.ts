import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { candidateRuleSet, runBacktest } from '../../src/backtest/backtest.js';
import { loadConfig } from '../../src/config/config.js';
import { createIpInspector, type ReloadingIpInspector } from '../../src/ip/index.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl } from '../support/store.js';
import { LIVE_RULES, WITH_EXAMPLE_ORG_RULE } from './candidate.js';

/**
 * Backtests over evaluations the real app made and logged, on both engines: a candidate that adds
 * a rule changes exactly the decisions that rule fires on; labels give the confusion matrix they
 * should; the facts replayed are the logged ones (the Tor list changed after logging changes
 * nothing); evaluations that cannot be replayed are skipped with their reason; other event types,
 * other accounts and evaluations outside the range are not read.
 */
const TOR_EXIT = '198.51.100.7';

describe.each(ENGINES)('backtest on %s', (engine) => {
  let t: TestApp;
  let ip: ReloadingIpInspector;
  let dataDir: string;
  const ids: Record<string, string> = {};
  let startedAt: number;

  const evaluate = async (name: string, body: Record<string, unknown>) => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody(body) });
    expect(response.statusCode, response.body).toBe(200);
    ids[name] = response.json().id;
    return response.json();
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'risk-backtest-data-'));
    await writeFile(join(dataDir, 'tor-exit-nodes.txt'), `${TOR_EXIT}\n`);
    const env = { DATA_DIR: dataDir, DATABASE_URL: await freshDatabaseUrl(engine) };
    ip = await createIpInspector({ config: loadConfig({ ...env, RULES_DIR: 'rules' }), logger: pino({ level: 'silent' }), openData: null });
    t = await startTestApp(env, { ip });
    startedAt = Date.now() - 1;
    // Each from its own address, so no address is busy enough for ip_velocity.
    await evaluate('tor', { ip: TOR_EXIT, email: 'tor.user@example.com' });
    await evaluate('plain1', { ip: '203.0.113.1', email: 'one@example.com' });
    await evaluate('plain2', { ip: '203.0.113.2', email: 'two@example.com' });
    await evaluate('org1', { ip: '203.0.113.3', email: 'three@example.org' });
    await evaluate('org2', { ip: '203.0.113.4', email: 'four@example.org' });
    await evaluate('org3', { ip: '203.0.113.5', email: 'five@example.org' });
    await evaluate('login', { ip: '203.0.113.6', email: 'six@example.org', event_type: 'account_login' });
    await t.app.store.log.flush();

    // Labelled later, as the feedback route would.
    const label = (name: string, value: 'fraud' | 'legit') => t.app.store.labels.set('default', ids[name]!, value, null, { actor: 'test' });
    await label('tor', 'fraud');
    await label('plain1', 'legit');
    await label('plain2', 'fraud');
    await label('org1', 'fraud');
    await label('org2', 'legit');
  });

  afterAll(async () => {
    await t?.app.close();
    await ip?.close();
  });

  const backtest = (yaml: string, options: { pageSize?: number; account?: string; since?: number; dutyCycle?: number; pause?: (ms: number) => Promise<void> } = {}) =>
    runBacktest(t.app.store.engine.db, { account: options.account ?? 'default', eventType: 'account_register', since: options.since ?? startedAt, until: Date.now() + 1 },
      candidateRuleSet('account_register', 'candidate.yaml', yaml), { pageSize: options.pageSize, dutyCycle: options.dutyCycle, pause: options.pause });

  it('pauses after each page for its share of the time (BACKTEST_CPU_PERCENT), with the same report', async () => {
    const full = await backtest(WITH_EXAMPLE_ORG_RULE, { pageSize: 2 });
    const pauses: number[] = [];
    const shared = await backtest(WITH_EXAMPLE_ORG_RULE, { pageSize: 2, dutyCycle: 0.25, pause: async (ms) => void pauses.push(ms) });
    // The same report but for its range's end (each call ends its range at its own now).
    expect({ ...shared, until: undefined }).toEqual({ ...full, until: undefined });
    // Six evaluations in pages of two: three pages, each followed by a pause of three times its work (a 25 % share).
    expect(pauses).toHaveLength(3);
    for (const ms of pauses) expect(ms).toBeGreaterThan(0);
    // At full speed (the default, as the CLI runs) it never pauses.
    await backtest(WITH_EXAMPLE_ORG_RULE, { pageSize: 2, pause: async (ms) => void pauses.push(ms) });
    expect(pauses).toHaveLength(3);
  });

  it('changes exactly the decisions the added rule fires on, and reports it rule by rule', async () => {
    const report = await backtest(WITH_EXAMPLE_ORG_RULE, { pageSize: 2 });
    expect(report).toMatchObject({ evaluations: 6, replayed: 6, skipped: { total: 0 }, changed: { state: 3, score: 3 } });
    expect(report.transitions).toEqual({
      approve: { approve: 2, review: 0, decline: 3 },
      review: { approve: 0, review: 0, decline: 0 },
      decline: { approve: 0, review: 0, decline: 1 },
    });
    expect(report.sample.map((s) => s.id)).toEqual([ids.org1, ids.org2, ids.org3]);
    for (const s of report.sample) {
      expect(s).toMatchObject({ live: { state: 'approve', fraud_score: 0 }, candidate: { state: 'decline', fraud_score: 40 }, rules_added: ['Sign-up from example.org'], rules_removed: [] });
    }
    const row = (name: string) => report.rules.find((r) => r.rule_name === name);
    expect(row('Sign-up from example.org')).toEqual({ rule_name: 'Sign-up from example.org', live: { hits: 0, dry_run_hits: 0, score: 0 }, candidate: { hits: 3, dry_run_hits: 0, score: 120 } });
    expect(row('IP address is a Tor exit node')).toEqual({ rule_name: 'IP address is a Tor exit node', live: { hits: 1, dry_run_hits: 0, score: 40 }, candidate: { hits: 1, dry_run_hits: 0, score: 40 } });
    // A candidate rule that never fired still has its row.
    expect(row('IP address belongs to a Proxy Server')?.candidate.hits).toBe(0);
  });

  it('gives each state\'s labels and the confusion matrix of decline for fraud, live and candidate', async () => {
    const { labels } = await backtest(WITH_EXAMPLE_ORG_RULE);
    expect(labels.labelled).toBe(5);
    // Live: tor declined (fraud); plain1 (legit), plain2 (fraud), org1 (fraud), org2 (legit) approved.
    expect(labels.live.by_state).toEqual({ approve: { fraud: 2, legit: 2 }, review: { fraud: 0, legit: 0 }, decline: { fraud: 1, legit: 0 } });
    expect(labels.live.confusion).toEqual({ true_positive: 1, false_positive: 0, false_negative: 2, true_negative: 2 });
    expect(labels.live.precision).toBe(1);
    expect(labels.live.recall).toBeCloseTo(1 / 3);
    // Candidate: org1 and org2 decline too.
    expect(labels.candidate.by_state).toEqual({ approve: { fraud: 1, legit: 1 }, review: { fraud: 0, legit: 0 }, decline: { fraud: 2, legit: 1 } });
    expect(labels.candidate.confusion).toEqual({ true_positive: 2, false_positive: 1, false_negative: 1, true_negative: 1 });
    expect(labels.candidate.precision).toBeCloseTo(2 / 3);
    expect(labels.candidate.recall).toBeCloseTo(2 / 3);
  });

  it('replays the facts as logged: the Tor list replaced after logging changes nothing', async () => {
    await writeFile(join(dataDir, 'tor-exit-nodes.txt'), '198.51.100.8\n');
    await ip.reload();
    // Live now answers differently for the same address...
    const now = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ ip: TOR_EXIT, email: 'again@example.net', event_type: 'account_login' }) });
    expect(now.json().ip.is_tor).toBe(false);
    // ...while the backtest, through the live file itself, still finds the Tor exit it logged.
    const report = await backtest(LIVE_RULES);
    expect(report.changed).toEqual({ state: 0, score: 0 });
    expect(report.transitions.decline.decline).toBe(1);
    expect(report.rules.find((r) => r.rule_name === 'IP address is a Tor exit node')?.candidate.hits).toBe(1);
  });

  it('skips what it cannot replay, with the reason, and reads only the account, event type and range asked', async () => {
    const [logged] = await t.app.store.engine.db.selectFrom('evaluations').selectAll().where('id', '=', ids.plain1!).execute();
    const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
    const response = JSON.parse(text(logged!.response));
    const record = (id: string, request: string, answer: unknown) => t.app.store.log.record({
      id, account_id: 'default', event_type: 'account_register', email: 'x@example.com', email_domain: 'example.com', ip: '203.0.113.9',
      user_id: null, device_hash: null, state: 'approve', fraud_score: 0, rule_set_version: null, fired: [], request, response: JSON.stringify(answer), shadow: null,
    });
    const later = (n: number) => `${ids.org3!.slice(0, 24)}${String(n).padStart(12, 'f')}`;
    record(later(1), text(logged!.request), { ...response, unavailable: [...response.unavailable, 'rules'] });
    record(later(2), JSON.stringify({ ...JSON.parse(text(logged!.request)), email: 'not an address' }), response);
    await t.app.store.log.flush();

    const report = await backtest(LIVE_RULES, { pageSize: 3 });
    expect(report).toMatchObject({ evaluations: 8, replayed: 6, skipped: { total: 2, reasons: { rules_failed: 1, request_invalid: 1, unreadable: 0 } } });
    expect((await backtest(LIVE_RULES, { account: 'someone-else' })).evaluations).toBe(0);
    expect((await backtest(LIVE_RULES, { since: Date.now() + 1 })).evaluations).toBe(0);
  });
});
