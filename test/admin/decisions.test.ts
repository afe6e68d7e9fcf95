import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, expectAdminProblem, login, type Session } from '../support/admin.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * Decisions, labels and lists through the admin API, with the real app on both engines: real
 * evaluations made with an API key, then found by each filter, paged without gaps or repeats,
 * explained rule by rule from the log, labelled, and a list entry that decides the next evaluation.
 * Analysts may do all of it; a member of another account learns nothing.
 */
interface Summary { id: string; email: string; ip: string; user_id: string | null; state: string; rules: string[]; label: string | null; event_type: string }
interface Page { decisions: Summary[]; next_cursor: string | null }

const DEVICE = 'ab'.repeat(32);

describe.each(ENGINES)('decisions, labels and lists through the admin API on %s', (engine: EngineName) => {
  let t: TestApp;
  let admin: Session;
  let analyst: Session;
  let stranger: Session;
  /** Evaluation ids by name, and every id newest first. */
  const made: Record<string, string> = {};
  let all: string[] = [];

  const evaluate = async (overrides: Record<string, unknown>) => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody(overrides) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { id: string; score: { state: string }; signals: string[] };
  };
  const search = async (query: string, session: Session = analyst): Promise<Page> => {
    const response = await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions?${query}`, headers: session.read });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as Page;
  };
  const ids = async (query: string) => (await search(query)).decisions.map((d) => d.id);

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    const owner = await createUser(t.app.store, 'owner@example.com', { owner: true });
    await t.app.store.accounts.create('beta', 'Beta', { files: [], comment: '' }, `user:${owner.id}`);
    await createUser(t.app.store, 'admin@example.com', { roles: { default: 'admin' } });
    await createUser(t.app.store, 'analyst@example.com', { roles: { default: 'analyst' } });
    await createUser(t.app.store, 'stranger@example.com', { roles: { beta: 'admin' } });
    admin = await login(t.app, 'admin@example.com');
    analyst = await login(t.app, 'analyst@example.com');
    stranger = await login(t.app, 'stranger@example.com');

    made.disposable = (await evaluate({ email: 'Jane.Doe@Mailinator.com', ip: '203.0.113.7', user: { user_id: 'u-1' } })).id;
    made.device = (await evaluate({ email: 'bob@example.com', ip: '203.0.113.200', user: { user_id: 'u-1' }, device_intelligence: { device_hash: DEVICE } })).id;
    made.v6 = (await evaluate({ email: 'carol@example.org', ip: '2001:db8::1', event_type: 'account_login' })).id;
    for (let i = 1; i <= 7; i++) made[`plain${i}`] = (await evaluate({ email: `user${i}@example.net`, ip: `192.0.2.${i}` })).id;
    await t.app.store.log.flush();
    all = Object.values(made).reverse();
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('finds evaluations by each filter, newest first, comparing what the log stores', async () => {
    expect(await ids('')).toEqual(all);
    // The e-mail as the evaluation normalised it (case), the domain, an address, a CIDR of either family.
    expect(await ids('email=JANE.DOE@mailinator.com')).toEqual([made.disposable]);
    expect(await ids('domain=Example.com')).toEqual([made.device]);
    expect(await ids('ip=203.0.113.200')).toEqual([made.device]);
    expect(await ids(`ip=${encodeURIComponent('203.0.113.0/24')}`)).toEqual([made.device, made.disposable]);
    expect(await ids(`ip=${encodeURIComponent('::ffff:203.0.113.0/120')}`)).toEqual([made.device, made.disposable]);
    expect(await ids(`ip=${encodeURIComponent('2001:db8::/32')}`)).toEqual([made.v6]);
    expect(await ids(`ip=${encodeURIComponent('192.0.2.4/30')}`)).toEqual([made.plain7, made.plain6, made.plain5, made.plain4]);
    expect(await ids('user_id=u-1')).toEqual([made.device, made.disposable]);
    expect(await ids(`device_hash=${DEVICE}`)).toEqual([made.device]);
    expect(await ids('rule=email_disposable')).toEqual([made.disposable]);
    expect(await ids('rule=ip_tor')).toEqual([]);
    expect(await ids('state=decline')).toEqual([made.disposable]);
    expect(await ids('event_type=account_login')).toEqual([made.v6]);
    expect(await ids('state=decline&event_type=account_login')).toEqual([]);
    expect(await ids(`rule=email_disposable&${new URLSearchParams({ ip: '203.0.113.0/24', user_id: 'u-1' })}`)).toEqual([made.disposable]);

    const summary = (await search(`email=${encodeURIComponent('jane.doe@mailinator.com')}`)).decisions[0]!;
    expect(summary).toEqual({
      id: made.disposable, evaluated_at: expect.stringMatching(/^\d{4}-.*Z$/), event_type: 'account_register', state: 'decline', score: 40,
      email: 'jane.doe@mailinator.com', ip: '203.0.113.7', user_id: 'u-1', rules: ['email_disposable'], label: null,
    });
    expect((await search(`ip=${encodeURIComponent('2001:db8::/32')}`)).decisions[0]!.ip).toBe('2001:db8::1');
  });

  it('searches a time range by the ids\' own time', async () => {
    const times = (await search('limit=200')).decisions.map((d) => (d as unknown as { evaluated_at: string }).evaluated_at);
    const newest = Date.parse(times[0]!);
    expect(await ids(`from=${new Date(newest + 1).toISOString()}`)).toEqual([]);
    expect(await ids(`to=${new Date(newest + 1).toISOString()}`)).toEqual(all);
    expect(await ids(`to=${new Date(Date.parse(times.at(-1)!)).toISOString()}`)).toEqual([]);
    expect(await ids(`from=${encodeURIComponent(times.at(-1)!)}&to=${encodeURIComponent(new Date(newest + 1).toISOString())}`)).toEqual(all);
  });

  it('pages through every evaluation once, following next_cursor, while new ones are logged', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page = await search(`limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.decisions.length).toBeLessThanOrEqual(3);
      seen.push(...page.decisions.map((d) => d.id));
      cursor = page.next_cursor;
      // A newer evaluation logged mid-way is not on a later page: pages go back in time.
      if (pages++ === 0) {
        await evaluate({ email: 'late@example.net', ip: '192.0.2.99' });
        await t.app.store.log.flush();
      }
    } while (cursor !== null);
    expect(seen).toEqual(all);
    expect(pages).toBe(4);
    all = await ids('limit=200');
  });

  it('explains one decision: the request, every fact, each rule with the evidence it read, the version, the user\'s previous evaluation', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/${made.disposable}`, headers: analyst.read });
    expect(response.statusCode, response.body).toBe(200);
    const d = response.json();
    expect(d).toMatchObject({
      id: made.disposable, state: 'decline', score: 40, email: 'jane.doe@mailinator.com', email_domain: 'mailinator.com', ip: '203.0.113.7',
      request: { email: 'Jane.Doe@Mailinator.com', ip: '203.0.113.7', user: { user_id: 'u-1' } },
      response: { id: made.disposable, email: { disposable: true }, score: { fraud_score: 40, state: 'decline' } },
      rule_set: { event_type: 'account_register', version: 1, id: expect.any(Number) },
      replay: { status: 'replayed', differences: [] },
      labelled: null, previous_user_evaluation: null,
    });
    expect(d.unavailable).toContain('email.mx');
    const rules = d.rule_outcomes as Array<{ id: string; outcome: string; points: number; evidence: Array<{ field: string; value: unknown; reading: string; unavailable: string | null }> }>;
    expect(rules.map((r) => r.id)).toEqual(['email_undeliverable', 'email_disposable', 'ip_proxy', 'ip_datacenter', 'ip_tor', 'ip_velocity', 'device_multi_account', 'list_block', 'list_allow']);
    expect(rules.find((r) => r.id === 'email_disposable')).toMatchObject({ outcome: 'fired', points: 40, evidence: [{ field: 'email.disposable', value: true, reading: 'value', unavailable: null }] });
    // DNS was unreachable: deliverability is unknown, said so, and the rule did not fire on a guess.
    expect(rules.find((r) => r.id === 'email_undeliverable')).toMatchObject({ outcome: 'unknown', points: 0, evidence: [expect.objectContaining({ reading: 'unknown', unavailable: 'email.mx' })] });
    expect(rules.find((r) => r.id === 'list_block')).toMatchObject({ outcome: 'not_fired', points: 0 });
    // No Tor list in DATA_DIR: unknown, not clean.
    expect(rules.find((r) => r.id === 'ip_tor')).toMatchObject({ outcome: 'unknown', points: 0 });

    const second = (await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/${made.device}`, headers: analyst.read })).json();
    expect(second.previous_user_evaluation).toBe(made.disposable);
    expect(second.device_hash).toBe(DEVICE);
  });

  it('says when the version that decided is gone, or the rule step had failed, rather than guess', async () => {
    await t.app.store.engine.db.updateTable('evaluations').set({ rule_set_version: 999_999 }).where('id', '=', made.plain1!).execute();
    const d = (await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/${made.plain1}`, headers: analyst.read })).json();
    expect(d).toMatchObject({ rule_set: null, replay: { status: 'version_gone' }, rule_outcomes: null, response: { id: made.plain1 } });

    // Logged as an evaluation whose rule step failed logs it: `rules` in unavailable, no rule set's outcome.
    const logged = (await t.app.store.decisions.get('default', made.plain2!))!;
    const failed = { ...(logged.response as Record<string, unknown>), unavailable: ['email.mx', 'rules'] };
    await t.app.store.engine.db.updateTable('evaluations').set({ response: JSON.stringify(failed) }).where('id', '=', made.plain2!).execute();
    const f = (await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/${made.plain2}`, headers: analyst.read })).json();
    expect(f).toMatchObject({ rule_set: { event_type: 'account_register' }, replay: { status: 'rules_failed' }, rule_outcomes: null, unavailable: ['email.mx', 'rules'] });
  });

  it('lets an analyst label a decision; the label shows in search and in the audit log, and can be removed', async () => {
    const url = `/admin/v1/accounts/default/decisions/${made.device}/label`;
    const set = await t.app.inject({ method: 'PUT', url, headers: analyst.write, payload: { label: 'fraud', reason: 'Chargeback' } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ evaluation_id: made.device, label: 'fraud', reason: 'Chargeback', author: expect.stringMatching(/^user:usr_/) });
    expect(await ids('label=fraud')).toEqual([made.device]);
    expect(await ids('label=legit')).toEqual([]);
    expect(await ids('label=none')).toEqual(all.filter((id) => id !== made.device));
    expect((await search('user_id=u-1')).decisions.map((d) => d.label)).toEqual(['fraud', null]);
    expect((await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/${made.device}`, headers: analyst.read })).json().labelled).toMatchObject({ label: 'fraud', reason: 'Chargeback' });

    expect((await t.app.inject({ method: 'PUT', url, headers: admin.write, payload: { label: 'legit' } })).json()).toMatchObject({ label: 'legit', reason: null });
    expect(await ids('label=legit')).toEqual([made.device]);
    expect((await t.app.inject({ method: 'DELETE', url, headers: analyst.write })).json()).toMatchObject({ label: 'legit' });
    expect(await ids('label=none')).toEqual(all);
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url, headers: analyst.write }), 404, 'resource_not_found');

    const audit = (await t.app.store.audit({ account: 'default' })).filter((e) => e.action.startsWith('label.'));
    expect(audit.map((e) => [e.action, e.target])).toEqual([['label.remove', made.device], ['label.set', made.device], ['label.set', made.device]]);
    expect(audit[1]).toMatchObject({ before: { label: 'fraud' }, after: { label: 'legit' } });

    expectAdminProblem(await t.app.inject({ method: 'PUT', url, headers: analyst.write, payload: { label: 'maybe' } }), 400, 'invalid_request');
    expectAdminProblem(await t.app.inject({ method: 'PUT', url, headers: analyst.read, payload: { label: 'fraud' } }), 403, 'csrf_failed');
  });

  it('counts decisions per state in every bucket of a range, zeros included, with the search\'s filters', async () => {
    type Stats = { from: string; to: string; bucket: string; buckets: Array<{ start: string; approve: number; review: number; decline: number }> };
    const stats = async (query: string, session: Session = analyst) => {
      const response = await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/stats?${query}`, headers: session.read });
      expect(response.statusCode, response.body).toBe(200);
      return response.json() as Stats;
    };
    const totals = (answer: Stats) => answer.buckets.reduce((sum, b) => ({ approve: sum.approve + b.approve, review: sum.review + b.review, decline: sum.decline + b.decline }), { approve: 0, review: 0, decline: 0 });
    const byState = async (query: string) => ({
      approve: (await ids(`state=approve&${query}`)).length, review: (await ids(`state=review&${query}`)).length, decline: (await ids(`state=decline&${query}`)).length,
    });

    // The default range is the last 24 hours, in hours (24 or 25 buckets: the first and last partial), oldest first and contiguous.
    const day = await stats('');
    expect(day.bucket).toBe('hour');
    expect(day.buckets.length).toBeGreaterThanOrEqual(24);
    expect(day.buckets.length).toBeLessThanOrEqual(25);
    day.buckets.forEach((b, i) => expect(Date.parse(b.start)).toBe(Date.parse(day.buckets[0]!.start) + i * 3_600_000));
    expect(totals(day)).toEqual(await byState(''));
    expect(Object.values(totals(day)).reduce((a, b) => a + b)).toBe(all.length);

    // A range of minutes, filtered as the search filters.
    const from = new Date(Date.now() - 10 * 60_000).toISOString();
    const minutes = await stats(`from=${from}`);
    expect(minutes.bucket).toBe('minute');
    expect(totals(minutes)).toEqual(await byState(''));
    // Each evaluation is counted in the bucket of its own minute, under its state.
    const expected = new Map<string, Record<string, number>>();
    for (const d of (await search('limit=200')).decisions as Array<Summary & { evaluated_at: string }>) {
      const start = new Date(Math.floor(Date.parse(d.evaluated_at) / 60_000) * 60_000).toISOString();
      const slot = expected.get(start) ?? { approve: 0, review: 0, decline: 0 };
      slot[d.state]! += 1;
      expected.set(start, slot);
    }
    for (const b of minutes.buckets) expect({ approve: b.approve, review: b.review, decline: b.decline }, b.start).toEqual(expected.get(b.start) ?? { approve: 0, review: 0, decline: 0 });
    expect(totals(await stats(`from=${from}&event_type=account_login`))).toEqual(await byState('event_type=account_login'));
    expect(Object.values(totals(await stats('user_id=u-1'))).reduce((a, b) => a + b)).toBe(2);
    expect(totals(await stats('rule=email_disposable'))).toEqual(await byState('rule=email_disposable'));
    // A member of another account counts nothing of this one.
    expect(Object.values(totals((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/beta/decisions/stats', headers: stranger.read })).json() as Stats)).reduce((a, b) => a + b)).toBe(0);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/decisions/stats', headers: stranger.read }), 404, 'resource_not_found');

    // Bounded: at most 400 buckets, or a problem naming what to change.
    const refused = async (query: string) => expectAdminProblem(await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions/stats?${query}`, headers: analyst.read }), 400, 'invalid_request').errors!.map((e) => e.path);
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    expect(await refused(`bucket=minute&from=${daysAgo(1)}`)).toEqual(['bucket']);
    expect(await refused(`from=${daysAgo(500)}`)).toEqual(['from']);
    expect(await refused('from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z')).toEqual(['from']);
    expect(await refused('bucket=week')).toEqual(['bucket']);
    expect((await stats(`bucket=day&from=${daysAgo(300)}`)).bucket).toBe('day');
  });

  it('refuses a filter it cannot read, naming it', async () => {
    for (const [query, field] of [['ip=203.0.113.0/33', 'ip'], ['email=nobody', 'email'], ['cursor=bm90IGFuIGlk', 'cursor'], ['limit=201', 'limit'], ['label=spam', 'label'], ['from=yesterday', 'from']]) {
      const response = await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/default/decisions?${query}`, headers: analyst.read });
      expect(expectAdminProblem(response, 400, 'invalid_request').errors!.map((e) => e.path)).toEqual([field]);
    }
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/decisions/not-an-id', headers: analyst.read }), 404, 'resource_not_found');
  });

  it('regression: a 400 about a query string (?before=abc) was titled "The request body is invalid"', async () => {
    for (const url of ['/admin/v1/accounts/default/lists?before=abc', '/admin/v1/accounts/default/decisions?limit=abc', '/admin/v1/accounts/default/decisions/stats?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z']) {
      const body = expectAdminProblem(await t.app.inject({ method: 'GET', url, headers: analyst.read }), 400, 'invalid_request');
      expect(body.title, url).toBe('The query string is invalid');
      expect(body.detail, url).toMatch(/^Invalid query parameter: /);
    }
    // A body at fault keeps its title.
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'not an address', password: 'x' } });
    expect(expectAdminProblem(bad, 400, 'invalid_request').title).toBe('The request body is invalid');
  });

  it('tells a member of another account nothing: not the account, not its evaluations', async () => {
    const theirs = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/decisions', headers: stranger.read });
    const missing = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/nosuch/decisions', headers: stranger.read });
    expect(expectAdminProblem(theirs, 404, 'resource_not_found').detail).toBe('no account "default"');
    expect(expectAdminProblem(missing, 404, 'resource_not_found').detail).toBe('no account "nosuch"');
    // Through their own account: default's evaluation is not theirs, exactly as an id that never existed.
    const other = await t.app.inject({ method: 'GET', url: `/admin/v1/accounts/beta/decisions/${made.disposable}`, headers: stranger.read });
    expect(expectAdminProblem(other, 404, 'resource_not_found').detail).toBe(`account "beta" has no evaluation ${made.disposable} in its log (kept RETENTION_DAYS)`);
    expectAdminProblem(await t.app.inject({ method: 'PUT', url: `/admin/v1/accounts/beta/decisions/${made.disposable}/label`, headers: stranger.write, payload: { label: 'fraud' } }), 404, 'resource_not_found');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/beta/decisions', headers: stranger.read })).json()).toEqual({ decisions: [], next_cursor: null });
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/lists', headers: stranger.read }), 404, 'resource_not_found');
    expectAdminProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/default/lists', headers: stranger.write, payload: { list: 'block', kind: 'ip', value: '192.0.2.1', reason: 'x' } }), 404, 'resource_not_found');
  });

  it('lets an analyst manage lists: an entry added decides the next evaluation, at once; removed, it no longer does', async () => {
    const before = await evaluate({ email: 'mallory@example.net', ip: '198.51.100.23' });
    expect(before.score.state).toBe('approve');

    const add = await t.app.inject({
      method: 'POST', url: '/admin/v1/accounts/default/lists', headers: analyst.write,
      payload: { list: 'block', kind: 'email', value: 'Mallory@Example.NET', reason: '  Card testing  ' },
    });
    expect(add.statusCode, add.body).toBe(201);
    const entry = add.json() as { id: number; value: string; reason: string; author: string; expires_at: string | null };
    expect(entry).toMatchObject({ list: 'block', kind: 'email', value: 'mallory@example.net', reason: 'Card testing', author: expect.stringMatching(/^user:usr_/), expires_at: null });

    const after = await evaluate({ email: 'mallory@example.net', ip: '198.51.100.23' });
    expect(after.score.state).toBe('decline');
    await t.app.store.log.flush();
    expect(await ids('rule=list_block')).toEqual([after.id]);

    const listed = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/default/lists?list=block', headers: analyst.read });
    expect(listed.json()).toEqual({ entries: [expect.objectContaining({ id: entry.id, value: 'mallory@example.net' })], next_before: null });

    // Validated as the CLI validates: the field named; a duplicate is a conflict.
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/default/lists', headers: analyst.write, payload: { list: 'block', kind: 'ip', value: '300.1.2.3', reason: 'x' } });
    expect(expectAdminProblem(bad, 400, 'invalid_request').errors!.map((e) => e.path)).toEqual(['value']);
    const blank = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/default/lists', headers: analyst.write, payload: { list: 'block', kind: 'ip', value: '192.0.2.1', reason: '   ' } });
    expect(expectAdminProblem(blank, 400, 'invalid_request').errors!.map((e) => e.path)).toEqual(['reason']);
    const past = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/default/lists', headers: analyst.write, payload: { list: 'block', kind: 'ip', value: '192.0.2.1', reason: 'x', expires_at: '2001-01-01T00:00:00Z' } });
    expect(expectAdminProblem(past, 400, 'invalid_request').errors!.map((e) => e.path)).toEqual(['expires_at']);
    const again = await t.app.inject({ method: 'POST', url: '/admin/v1/accounts/default/lists', headers: admin.write, payload: { list: 'block', kind: 'email', value: 'mallory@example.net', reason: 'again' } });
    expectAdminProblem(again, 409, 'conflict');

    const removed = await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/default/lists/${entry.id}`, headers: analyst.write });
    expect(removed.json()).toMatchObject({ id: entry.id, value: 'mallory@example.net' });
    expect((await evaluate({ email: 'mallory@example.net', ip: '198.51.100.23' })).score.state).toBe('approve');
    expectAdminProblem(await t.app.inject({ method: 'DELETE', url: `/admin/v1/accounts/default/lists/${entry.id}`, headers: analyst.write }), 404, 'resource_not_found');

    const audit = (await t.app.store.audit({ account: 'default' })).filter((e) => e.action.startsWith('list.'));
    expect(audit.map((e) => e.action)).toEqual(['list.remove', 'list.add']);
    expect(audit.every((e) => e.actor.startsWith('user:usr_'))).toBe(true);
  });
});
