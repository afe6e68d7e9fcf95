import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvCell, MAX_EXPORT_ROWS } from '../../src/admin/routes/decisions.js';
import { createUser, expectAdminProblem, login, type Session } from '../support/admin.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * The admin API behind the console's entity pages, the CSV export and the explanations (issue 27),
 * through the real app on both engines: an IP's, a device's and a user's first and last seen,
 * counts, labels, list entries and links; bad values refused naming `value`; the account's people
 * by e-mail address for an analyst; a search exported as CSV with formula cells neutralised; a
 * decision explained with each comparison and the score's band.
 */
const RULES = `
thresholds: { review: 20, decline: 60 }
rules:
  - id: test_range
    name: Address in the test range
    score: 30
    when: { field: ip.address, cidr: [203.0.113.0/24] }
  - id: many_from_ip
    name: Many events from the address
    score: 10
    when: { field: history.ip.events_1h, gte: 5 }
`;

const DEVICE = 'ab'.repeat(32);

describe.each(ENGINES)('entities, people and the CSV export on %s', (engine: EngineName) => {
  let t: TestApp;
  let alice: Session;
  const ids: string[] = [];
  let aliceId = '';

  const evaluate = async (overrides: Record<string, unknown>) => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ event_type: 'signup', ...overrides }) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { id: string; score: { state: string } };
  };
  const get = (path: string) => t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default${path}`, headers: alice.read });

  beforeAll(async () => {
    const rules = mkdtempSync(join(tmpdir(), 'risk-rules-'));
    writeFileSync(join(rules, 'signup.yaml'), RULES);
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine), RULES_DIR: rules });
    aliceId = (await createUser(t.app.store, 'alice@example.com', { roles: { default: 'analyst' } })).id;
    alice = await login(t.app, 'alice@example.com');
    ids.push((await evaluate({ ip: '203.0.113.7', email: 'one@example.com', user: { user_id: 'u-1' }, device_intelligence: { device_hash: DEVICE } })).id);
    ids.push((await evaluate({ ip: '203.0.113.7', email: 'two@example.org', user: { user_id: 'u-2' }, device_intelligence: { device_hash: DEVICE } })).id);
    ids.push((await evaluate({ ip: '192.0.2.5', email: '=1+2@example.com', user: { user_id: '@u-3' } })).id);
    await t.app.store.log.flush();
    await t.app.store.labels.set('default', ids[0]!, 'fraud', null, { actor: 'test', audit: false });
    await t.app.store.lists.add('default', { list: 'block', kind: 'device', value: DEVICE, reason: 'Card testing' }, { actor: 'test' });
  });
  afterAll(async () => t?.app.close());

  it('answers an IP address: seen, counts, labels, the users and devices linked to it', async () => {
    const response = await get('/entities/ip?value=203.0.113.7');
    expect(response.statusCode, response.body).toBe(200);
    const ip = response.json();
    expect(ip).toMatchObject({ kind: 'ip', value: '203.0.113.7', scanned: 2, states: { review: 2, approve: 0, decline: 0 }, labels: { fraud: 1, legit: 0 }, list_entries: [] });
    expect(ip.first_seen <= ip.last_seen).toBe(true);
    expect(ip.linked.users).toEqual(['u-2', 'u-1']);
    expect(ip.linked.devices).toEqual([DEVICE]);
    expect(ip.linked.emails).toEqual(['two@example.org', 'one@example.com']);
    expect(ip.linked.ips).toEqual([]);
  });

  it('answers a device with its list entries, and a user with its devices and addresses', async () => {
    const device = (await get(`/entities/device?value=${DEVICE.toUpperCase()}`)).json();
    expect(device).toMatchObject({ value: DEVICE, scanned: 2, linked: { users: ['u-2', 'u-1'], ips: ['203.0.113.7'] } });
    expect(device.list_entries).toMatchObject([{ list: 'block', kind: 'device', value: DEVICE, reason: 'Card testing', author: 'test' }]);
    const user = (await get('/entities/user?value=u-1')).json();
    expect(user).toMatchObject({ scanned: 1, linked: { devices: [DEVICE], ips: ['203.0.113.7'], emails: ['one@example.com'] } });
    const unseen = (await get('/entities/email?value=nobody@example.com')).json();
    expect(unseen).toMatchObject({ first_seen: null, last_seen: null, scanned: 0, linked: { users: [] } });
  });

  it('refuses a value that is not of its kind, naming value', async () => {
    expect(expectAdminProblem(await get('/entities/ip?value=203.0.113.0/24'), 400, 'invalid_request').errors).toMatchObject([{ path: 'value' }]);
    expect(expectAdminProblem(await get('/entities/device?value=xyz'), 400, 'invalid_request').errors).toMatchObject([{ path: 'value' }]);
    expect(expectAdminProblem(await get('/entities/email'), 400, 'invalid_request').errors).toMatchObject([{ path: 'value' }]);
    expect((await get('/entities/planet?value=x')).statusCode).toBe(404);
  });

  it('names the account\'s people for an analyst', async () => {
    const response = await get('/people');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().people).toContainEqual({ actor: `user:${aliceId}`, name: 'alice@example.com' });
  });

  it('exports a search as CSV, newest first, formulas neutralised', async () => {
    const response = await get('/decisions/export?state=review');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="decisions-default-\d{8}-\d{6}\.csv"$/);
    const lines = response.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,evaluated_at,event_type,state,score,email,ip,user_id,device_hash,rules,label');
    expect(lines).toHaveLength(3);
    expect(lines[1]!.startsWith(`${ids[1]},`)).toBe(true);
    expect(lines[2]).toContain(',fraud');
    const all = (await get('/decisions/export')).body;
    expect(all).toContain(",'=1+2@example.com,");
    expect(all).toContain(",'@u-3,");
    expect(expectAdminProblem(await get('/decisions/export?ip=nonsense'), 400, 'invalid_request').errors).toMatchObject([{ path: 'ip' }]);
    expect(MAX_EXPORT_ROWS).toBe(10_000);
  });

  it('explains a decision with each comparison and the score\'s band', async () => {
    const detail = (await get(`/decisions/${ids[0]}`)).json();
    expect(detail.thresholds).toEqual({ review: 20, decline: 60 });
    const many = detail.rule_outcomes.find((o: { id: string }) => o.id === 'many_from_ip');
    expect(many.evidence).toEqual([{ field: 'history.ip.events_1h', value: expect.any(Number), reading: 'value', unavailable: null, condition: '≥ 5' }]);
    const range = detail.rule_outcomes.find((o: { id: string }) => o.id === 'test_range');
    expect(range.evidence[0].condition).toBe('in the rule\'s ranges');
  });
});

describe('a CSV cell', () => {
  it('quotes what needs quoting and prefixes what a spreadsheet would run', () => {
    expect(['plain', 'a,b', 'say "hi"', 'line\nbreak', '=1+1', '+1', '-1', '@SUM(A1)', '\tx', null, 42].map(csvCell))
      .toEqual(['plain', '"a,b"', '"say ""hi"""', '"line\nbreak"', "'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\tx", '', '42']);
  });
});
