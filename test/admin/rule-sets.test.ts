import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, expectRuleFileProblem, login, problemShape, type Session } from '../support/admin.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * Rule sets through HTTP with the real app, on both engines: what an admin does in the console's
 * rule cards (edit a draft, dry-run it, publish, roll back, import and export YAML, add an event
 * type) and what `/v1/risk/evaluate` then decides; and as an attacker would try it (an analyst
 * publishing, a member of another account, a cookie without its CSRF token).
 *
 * No DNS server and no IP data here: e-mail and IP checks are unknown, so the rules that decide
 * read the request itself (`email.domain`), the same on every machine.
 */
const BLOCKED = 'blocked.example';
const blockRule = { id: 'blocked_domain', name: 'Domain on our block list', score: 60, when: { field: 'email.domain', equals: BLOCKED } };

describe.each(ENGINES)('rule sets on %s', (engine: EngineName) => {
  let t: TestApp;
  let adminA: Session;
  let analystA: Session;
  let adminB: Session;
  let keyA: string;
  const base = '/admin/v1/accounts/alpha';
  const register = `${base}/rule-sets/account_register`;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) });
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    const owner = await login(t.app, 'owner@example.com');
    for (const id of ['alpha', 'beta']) {
      expect((await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: owner.write, payload: { id } })).statusCode).toBe(201);
    }
    await createUser(t.app.store, 'admin.a@example.com', { roles: { alpha: 'admin' } });
    await createUser(t.app.store, 'analyst.a@example.com', { roles: { alpha: 'analyst' } });
    await createUser(t.app.store, 'admin.b@example.com', { roles: { beta: 'admin' } });
    adminA = await login(t.app, 'admin.a@example.com');
    analystA = await login(t.app, 'analyst.a@example.com');
    adminB = await login(t.app, 'admin.b@example.com');
    keyA = (await t.app.store.accounts.createKey('alpha', { actor: 'test', seed: { files: [], comment: '' } })).key;
    await t.app.reloadConfiguration();
  });
  afterAll(async () => {
    await t.app.close();
  });

  const get = (session: Session, url: string) => t.app.inject({ method: 'GET', url, headers: session.read });
  const send = (session: Session, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) => t.app.inject({ method, url, headers: session.write, payload });
  const evaluate = (overrides: Record<string, unknown> = {}) =>
    t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(keyA), payload: evaluationBody(overrides) });
  const me = async (session: Session) => `user:${(await get(session, '/admin/v1/session')).json().user.id as string}`;
  const liveVersion = async () => (await get(adminA, register)).json().published.version as number;

  it('shows the library (every built-in rule, its default score and the fact it reads) and the field catalogue', async () => {
    const library = (await get(analystA, `${base}/rules/library`)).json().rules as Array<Record<string, unknown>>;
    expect(library.map((r) => r.id)).toEqual(expect.arrayContaining(['email_undeliverable', 'email_disposable', 'ip_proxy', 'ip_datacenter', 'ip_tor', 'email_free_provider', 'ip_vpn']));
    expect(library.find((r) => r.id === 'ip_tor')).toEqual({
      id: 'ip_tor', name: 'IP address is a Tor exit node', description: expect.any(String), default_score: expect.any(Number), reads: 'ip.is_tor', fires_when: true, check: 'ip.tor', parameters: [],
    });
    // A rule with thresholds lists each with its default and bounds, as a rule file's params take them.
    expect(library.find((r) => r.id === 'ip_velocity')?.parameters).toEqual([
      { name: 'events_1h', description: expect.any(String), default: 5, min: 1, max: 1_000_000 },
      { name: 'events_24h', description: expect.any(String), default: 20, min: 1, max: 1_000_000 },
    ]);
    const catalogue = (await get(analystA, `${base}/rules/fields`)).json();
    expect(catalogue.combinators).toEqual(['all', 'any', 'not']);
    const domain = catalogue.fields.find((f: { path: string }) => f.path === 'email.domain');
    expect(domain).toMatchObject({ type: 'text', value_type: 'string', check: null });
    expect(domain.operators).toEqual(expect.arrayContaining(['equals', 'in', 'ends_with', 'matches']));
    expect(domain.operators).not.toContain('cidr');
    expect(catalogue.fields.find((f: { path: string }) => f.path === 'ip.address').operators).toContain('cidr');
  });

  it('lists each event type with its live version, and shows one as YAML and as the rules it takes effect as', async () => {
    const list = (await get(analystA, `${base}/rule-sets`)).json().rule_sets as Array<{ event_type: string; published: { version: number } | null; draft: unknown }>;
    expect(list.map((r) => r.event_type)).toEqual(['account_login', 'account_register', 'account_update', 'password_reset']);
    expect(list.every((r) => r.published !== null && r.draft === null)).toBe(true);
    const shown = (await get(analystA, register)).json();
    expect(shown.draft).toBeNull();
    expect(shown.published).toMatchObject({ status: 'published', thresholds: { review: 20, decline: 40 }, problems: [] });
    expect(shown.published.yaml).toContain('# Registration');
    expect(shown.published.rules.find((r: { id: string }) => r.id === 'ip_tor')).toMatchObject({ kind: 'library', score: 40, mode: 'live', reads: ['ip.is_tor'] });
    expectAdminProblem(await get(analystA, `${base}/rule-sets/checkout`), 404, 'resource_not_found');
  });

  it('refuses an analyst every write, answers another account\'s member as for a missing account, and refuses a cookie without its CSRF token', async () => {
    for (const [method, url, payload] of [
      ['POST', `${register}/publish`, { comment: 'by analyst' }],
      ['PUT', `${register}/draft/thresholds`, { review: 10, decline: 20 }],
      ['POST', `${register}/draft/rules`, { rule: blockRule }],
      ['POST', `${register}/rollback`, { version: 1 }],
      ['POST', `${base}/rule-files`, { files: [{ event_type: 'account_register', yaml: 'rules: []\n' }] }],
      ['POST', `${base}/rule-sets`, { event_type: 'checkout', from: { kind: 'empty' } }],
    ] as const) {
      expectAdminProblem(await send(analystA, method, url, payload), 403, 'forbidden');
      const foreign = await send(adminB, method, url, payload);
      expectAdminProblem(foreign, 404, 'resource_not_found');
      expect(JSON.stringify(problemShape(foreign))).toBe(JSON.stringify(problemShape(await send(adminB, method, url.replace('/alpha', '/gamma'), payload))).replace('gamma', 'alpha'));
      expectAdminProblem(await t.app.inject({ method, url, headers: adminA.read, payload }), 403, 'csrf_failed');
    }
    for (const url of [register, `${register}/versions`, `${base}/rule-files`, `${base}/rules/library`]) expectAdminProblem(await get(adminB, url), 404, 'resource_not_found');
    // Nothing of the above reached the store.
    expect((await get(adminA, register)).json().draft).toBeNull();
    expect((await t.app.store.audit({ account: 'alpha' })).filter((a) => a.action.startsWith('rule_set'))).toEqual([]);
  });

  it('refuses a bad custom rule with a 400 problem naming the path in the file, as data and as YAML (with its line)', async () => {
    const asData = await send(adminA, 'POST', `${register}/draft/rules`, { rule: { ...blockRule, when: { field: 'email.domain', cidr: '10.0.0.0/8' } } });
    const dataErrors = expectAdminProblem(asData, 400, 'invalid_request').errors!;
    expect(dataErrors.map((e) => e.path)).toEqual(['rule.when.cidr']);
    expect(dataErrors[0]!.message).toMatch(/cidr/);
    const unknownField = await send(adminA, 'POST', `${register}/draft/rules`, { rule: { ...blockRule, when: { all: [{ field: 'email.domian', equals: 'x' }] } } });
    expect(expectAdminProblem(unknownField, 400, 'invalid_request').errors!.map((e) => e.path)).toEqual(['rule.when.all.0.field']);

    const yaml = `rules:\n  - library: ip_tor\n  - id: blocked_domain\n    name: Blocked\n    score: 600\n    when: { field: email.domain, equals: ${BLOCKED} }\n`;
    const asYaml = await send(adminA, 'PUT', `${register}/draft`, { yaml });
    const [problem] = expectRuleFileProblem(asYaml);
    expect(problem).toMatchObject({ path: 'rules[1].score', file: 'alpha/account_register.yaml', line: 5 });
    // The same problem from the validation endpoint, which an analyst may use: nothing is saved.
    expect((await send(analystA, 'POST', `${register}/validate`, { yaml })).json().errors).toEqual(asYaml.json().errors);
    expect((await get(adminA, register)).json().draft).toBeNull();
  });

  it('edits a draft a piece at a time, keeping the file\'s comments, and shows the diff against the live version', async () => {
    const added = await send(adminA, 'POST', `${register}/draft/rules`, { rule: blockRule, position: 0, comment: 'block list' });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({ status: 'draft', author: await me(adminA), comment: 'block list' });
    const changed = await send(adminA, 'PUT', `${register}/draft/rules/ip_tor`, { rule: { library: 'ip_tor', score: 50, mode: 'dry_run' } });
    expect(changed.json().rules.find((r: { id: string }) => r.id === 'ip_tor')).toMatchObject({ score: 50, mode: 'dry_run' });
    expect((await send(adminA, 'DELETE', `${register}/draft/rules/ip_datacenter`)).statusCode).toBe(200);
    expectAdminProblem(await send(adminA, 'DELETE', `${register}/draft/rules/ip_datacenter`), 404, 'resource_not_found');
    expectAdminProblem(await send(adminA, 'POST', `${register}/draft/rules`, { rule: blockRule }), 409, 'conflict');
    const draft = (await send(adminA, 'PUT', `${register}/draft/thresholds`, { review: 25, decline: 50 })).json();
    expect(draft.thresholds).toEqual({ review: 25, decline: 50 });
    expect(draft.rules.map((r: { id: string }) => r.id)).toEqual(['blocked_domain', 'email_undeliverable', 'email_disposable', 'ip_proxy', 'ip_tor', 'ip_velocity', 'device_multi_account', 'list_block', 'list_allow']);
    expect(draft.yaml).toContain('# Registration: the spec\'s five library rules');
    expect(draft.yaml).toContain('- a throw-away mailbox or a Tor exit');

    const diff = (await get(analystA, `${register}/diff`)).json();
    expect(diff.from.status).toBe('published');
    expect(diff.to).toMatchObject({ status: 'draft', version: draft.version });
    expect(diff.thresholds).toEqual({ from: { review: 20, decline: 40 }, to: { review: 25, decline: 50 } });
    expect(diff.rules.added.map((r: { id: string }) => r.id)).toEqual(['blocked_domain']);
    expect(diff.rules.removed.map((r: { id: string }) => r.id)).toEqual(['ip_datacenter']);
    expect(diff.rules.changed).toEqual([{ id: 'ip_tor', changes: [{ property: 'score', from: 40, to: 50 }, { property: 'mode', from: 'live', to: 'dry_run' }] }]);
    expect(diff.text).toContain('-    score: 40');
    expect(diff.text).toContain('+    score: 50');
  });

  it('dry-runs the draft against a sample request with the enrichment, recording nothing', async () => {
    await t.app.store.log.flush();
    const before = t.app.store.log.stats();
    const response = await send(analystA, 'POST', `${register}/dry-run`, { request: { ip: '81.2.69.160', email: `jane@${BLOCKED}` } });
    expect(response.statusCode, response.body).toBe(200);
    const run = response.json();
    expect(run.version.status).toBe('draft');
    expect(run.score).toMatchObject({ fraud_score: 60, state: 'decline', details: [{ rule_id: 'blocked_domain', rule_name: 'Domain on our block list', score: 60 }] });
    expect(run.rules[0]).toMatchObject({ id: 'blocked_domain', outcome: 'fired', evidence: [{ field: 'email.domain', value: BLOCKED, reading: 'value', unavailable: null }] });
    // The enrichment ran (the DNS server of this test app answers nothing): the checks it could not make are named.
    expect(run.unavailable).toContain('email.mx');
    expect(run.email.domain).toBe(BLOCKED);
    expect(run.live).toMatchObject({ fraud_score: 0, state: 'approve' });
    await t.app.store.log.flush();
    const after = t.app.store.log.stats();
    expect([after.written, after.queued, after.dropped]).toEqual([before.written, before.queued, before.dropped]);
    expect(expectAdminProblem(await send(analystA, 'POST', `${register}/dry-run`, { request: { ip: 'not an ip', email: 'x@y.example' } }), 400, 'invalid_request').errors!.map((e) => e.path)).toEqual(['request.ip']);
  });

  it('publishes the draft with a comment: /v1/risk/evaluate decides with the new version at once, audited; a rollback restores the old one', async () => {
    const before = await evaluate({ email: `jane@${BLOCKED}` });
    expect(before.json().score).toMatchObject({ fraud_score: 0, state: 'approve' });
    const previous = await liveVersion();
    const draft = (await get(adminA, register)).json().draft;

    expectAdminProblem(await send(adminA, 'POST', `${register}/publish`, { comment: 'stale', yaml_sha256: '0'.repeat(64) }), 409, 'conflict');
    const published = await send(adminA, 'POST', `${register}/publish`, { comment: 'Block list and Tor to 50', yaml_sha256: draft.yaml_sha256 });
    expect(published.statusCode, published.body).toBe(200);
    expect(published.json()).toMatchObject({ version: draft.version, status: 'published', comment: 'Block list and Tor to 50' });
    expect((await get(adminA, register)).json().draft).toBeNull();

    const after = await evaluate({ email: `jane@${BLOCKED}` });
    expect(after.json().score).toMatchObject({ fraud_score: 60, state: 'decline' });
    await t.app.store.log.flush();
    const logged = await t.app.store.engine.db.selectFrom('evaluations').select('rule_set_version').where('id', '=', after.json().id as string).executeTakeFirstOrThrow();
    expect(logged.rule_set_version).toBe((await t.app.store.ruleSets.get('alpha', 'account_register', draft.version))!.id);

    const [entry] = await t.app.store.audit({ account: 'alpha' });
    expect(entry).toMatchObject({ actor: await me(adminA), action: 'rule_set.publish', target: 'account_register', before: { version: previous }, after: { version: draft.version, comment: 'Block list and Tor to 50' } });
    expect(typeof entry!.at).toBe('number');

    const history = (await get(analystA, `${register}/versions?limit=1`)).json();
    expect(history.versions).toEqual([expect.objectContaining({ version: draft.version, status: 'published', comment: 'Block list and Tor to 50' })]);
    const older = (await get(analystA, `${register}/versions?before=${history.next_before as number}`)).json();
    expect(older.versions.map((v: { status: string }) => v.status)).toEqual(['archived']);
    expect(older.next_before).toBeNull();
    const old = (await get(analystA, `${register}/versions/${previous}`)).json();
    expect(old).toMatchObject({ version: previous, status: 'archived' });
    expect((await get(analystA, `${register}/diff?from=${previous}&to=${draft.version}`)).json().rules.added.map((r: { id: string }) => r.id)).toEqual(['blocked_domain']);

    const rolledBack = await send(adminA, 'POST', `${register}/rollback`, { version: previous });
    expect(rolledBack.statusCode, rolledBack.body).toBe(200);
    expect(rolledBack.json()).toMatchObject({ version: draft.version + 1, status: 'published', comment: `rollback to version ${previous}`, yaml: old.yaml });
    expect((await evaluate({ email: `jane@${BLOCKED}` })).json().score).toMatchObject({ fraud_score: 0, state: 'approve' });
    expect((await t.app.store.audit({ account: 'alpha' }))[0]).toMatchObject({
      actor: await me(adminA), action: 'rule_set.rollback', before: { version: draft.version }, after: { version: draft.version + 1, from_version: previous },
    });
    expectAdminProblem(await send(adminA, 'POST', `${register}/rollback`, { version: draft.version + 1 }), 409, 'conflict');
    expectAdminProblem(await send(adminA, 'POST', `${register}/publish`, { comment: 'nothing' }), 404, 'resource_not_found');
  });

  it('exports YAML and imports it back: unchanged files stay, a changed one is published, drafts on request; a bad file is refused whole', async () => {
    const exported = (await get(analystA, `${base}/rule-files`)).json().files as Array<{ event_type: string; version: number; yaml: string }>;
    expect(exported.map((f) => f.event_type)).toEqual(['account_login', 'account_register', 'account_update', 'password_reset']);
    const files = exported.map(({ event_type, yaml }) => ({ event_type, yaml }));
    const same = (await send(adminA, 'POST', `${base}/rule-files`, { files, comment: 'round trip' })).json();
    expect(same.files.map((f: { outcome: string }) => f.outcome)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);

    const login = files.find((f) => f.event_type === 'account_login')!;
    const changed = { event_type: 'account_login', yaml: `${login.yaml}  - id: blocked_domain\n    name: Blocked\n    score: 45\n    when: { field: email.domain, equals: ${BLOCKED} }\n` };
    const bad = { event_type: 'password_reset', yaml: 'rules:\n  - library: no_such_rule\n' };
    const refused = await send(adminA, 'POST', `${base}/rule-files`, { files: [changed, bad] });
    expect(expectRuleFileProblem(refused)).toEqual([expect.objectContaining({ file: 'alpha/password_reset.yaml', path: 'rules[0].library', line: 2 })]);
    expect((await get(analystA, `${base}/rule-files?event_type=account_login`)).json().files[0].yaml).toBe(login.yaml);

    const asDraft = (await send(adminA, 'POST', `${base}/rule-files`, { files: [changed], publish: false })).json();
    expect(asDraft.files).toEqual([{ event_type: 'account_login', version: expect.any(Number), outcome: 'draft' }]);
    expect((await get(analystA, `${base}/rule-sets/account_login`)).json().draft.yaml).toBe(changed.yaml);
    expect((await evaluate({ email: `jane@${BLOCKED}`, event_type: 'account_login' })).json().score.fraud_score).toBe(0);

    const applied = (await send(adminA, 'POST', `${base}/rule-files`, { files: [changed], comment: 'from CI' })).json();
    expect(applied.files).toEqual([{ event_type: 'account_login', version: expect.any(Number), outcome: 'published' }]);
    expect((await evaluate({ email: `jane@${BLOCKED}`, event_type: 'account_login' })).json().score.fraud_score).toBe(45);
    const back = (await get(analystA, `${base}/rule-files?event_type=account_login`)).json().files;
    expect(back).toEqual([{ event_type: 'account_login', version: applied.files[0].version, yaml: changed.yaml }]);

    // A file larger than BODY_LIMIT_BYTES (32 KiB here, for /v1) goes through; a body over 1 MiB is a 413 that says so.
    const large = { event_type: 'account_login', yaml: `${'# a long comment\n'.repeat(1800)}${changed.yaml}` };
    expect(Buffer.byteLength(large.yaml)).toBeGreaterThan(t.config.bodyLimitBytes - 2048);
    expect((await send(adminA, 'POST', `${base}/rule-files`, { files: [large], publish: false })).statusCode).toBe(200);
    const tooMuch = await send(adminA, 'POST', `${base}/rule-files`, { files: Array.from({ length: 40 }, (_, i) => ({ ...large, event_type: `type_${i}` })) });
    expect(expectAdminProblem(tooMuch, 413, 'payload_too_large').detail).toBe('The body must be at most 1048576 bytes');
  });

  it('adds an event type that /v1/risk/evaluate accepts at once, and refuses it twice', async () => {
    expect((await evaluate({ event_type: 'checkout' })).statusCode).toBe(400);
    const created = await send(adminA, 'POST', `${base}/rule-sets`, { event_type: 'checkout', from: { kind: 'copy', event_type: 'account_login' }, comment: 'like login' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ event_type: 'checkout', version: 1, status: 'published', comment: 'like login' });
    expect((await evaluate({ email: `jane@${BLOCKED}`, event_type: 'checkout' })).json().score.fraud_score).toBe(45);
    expectAdminProblem(await send(adminA, 'POST', `${base}/rule-sets`, { event_type: 'checkout', from: { kind: 'empty' } }), 409, 'conflict');
    expect((await t.app.store.audit({ account: 'alpha' }))[0]).toMatchObject({ actor: await me(adminA), action: 'rule_set.create', target: 'checkout', before: null });
    // Another account is untouched: its event types are its own.
    expect((await get(adminB, '/admin/v1/accounts/beta/rule-sets')).json().rule_sets.map((r: { event_type: string }) => r.event_type)).not.toContain('checkout');
  });

  it('lets a pipeline apply rule files with an admin token (no cookie, no CSRF token); an analyst token only reads, and neither reaches another account', async () => {
    const token = async (role: 'admin' | 'analyst') =>
      (await send(adminA, 'POST', `${base}/tokens`, { name: `ci-${role}`, role })).json().token as string;
    const [ci, reader] = [await token('admin'), await token('analyst')];
    const asToken = (value: string, method: 'GET' | 'POST', url: string, payload?: object) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${value}` }, payload });
    const file = (await asToken(reader, 'GET', `${base}/rule-files?event_type=password_reset`)).json().files[0] as { event_type: string; yaml: string };
    const changed = { event_type: file.event_type, yaml: file.yaml.replace('rules:', 'thresholds:\n  review: 15\n  decline: 45\nrules:') };
    expectAdminProblem(await asToken(reader, 'POST', `${base}/rule-files`, { files: [changed] }), 403, 'forbidden');
    expectAdminProblem(await asToken(ci, 'POST', '/admin/v1/accounts/beta/rule-files', { files: [changed] }), 404, 'resource_not_found');
    const applied = await asToken(ci, 'POST', `${base}/rule-files`, { files: [changed], comment: 'rules repo 4f1c2a9' });
    expect(applied.json().files).toEqual([{ event_type: 'password_reset', version: 2, outcome: 'published' }]);
    expect((await get(analystA, `${base}/rule-sets/password_reset`)).json().published).toMatchObject({ thresholds: { review: 15, decline: 45 }, comment: 'rules repo 4f1c2a9' });
    expect((await t.app.store.audit({ account: 'alpha' }))[0]).toMatchObject({ actor: expect.stringMatching(/^token:tok_/), target: 'password_reset' });
  });

  it('refuses to publish a draft that something was published over while it waited, until its whole text is saved again', async () => {
    const update = `${base}/rule-sets/account_update`;
    const draft = (await send(adminA, 'PUT', `${update}/draft/thresholds`, { review: 10, decline: 30 })).json();
    const live = (await get(adminA, update)).json().published;
    const imported = { event_type: 'account_update', yaml: live.yaml.replace('rules:', '# from CI\nrules:') };
    const applied = (await send(adminA, 'POST', `${base}/rule-files`, { files: [imported] })).json().files[0];
    expect(applied.version).toBeGreaterThan(draft.version);

    const refused = expectAdminProblem(await send(adminA, 'POST', `${update}/publish`, { comment: 'thresholds' }), 409, 'conflict');
    expect(refused.detail).toContain(`version ${applied.version as number} of account_update was published after this draft (version ${draft.version as number})`);
    // A piece-wise edit does not count as reviewing the whole file against what is live now.
    await send(adminA, 'PUT', `${update}/draft/thresholds`, { review: 10, decline: 35 });
    expectAdminProblem(await send(adminA, 'POST', `${update}/publish`, { comment: 'thresholds' }), 409, 'conflict');

    const reviewed = (await get(adminA, `${update}/diff`)).json();
    expect(reviewed.text).toContain('-# from CI');
    const resaved = (await send(adminA, 'PUT', `${update}/draft`, { yaml: `${imported.yaml}thresholds:\n  review: 10\n  decline: 35\n` })).json();
    expect(resaved.version).toBe(applied.version + 1);
    const published = await send(adminA, 'POST', `${update}/publish`, { comment: 'thresholds, on top of CI' });
    expect(published.json()).toMatchObject({ version: applied.version + 1, status: 'published', thresholds: { review: 10, decline: 35 } });
    expect(published.json().yaml).toContain('# from CI');
  });

  it('changes several rules and the thresholds in one edit (the console\'s one Save): all or nothing, refused when the draft changed since it was read', async () => {
    await send(adminA, 'DELETE', `${register}/draft`);
    const live = (await get(adminA, register)).json().published;
    const edit = { rules: { ip_tor: { library: 'ip_tor', score: 45 }, email_disposable: { library: 'email_disposable', score: 35 } }, thresholds: { review: 22, decline: 44 } };
    expectAdminProblem(await send(analystA, 'PATCH', `${register}/draft`, edit), 403, 'forbidden');
    // Each problem named at the rule and field it is about; nothing saved.
    const bad = expectAdminProblem(await send(adminA, 'PATCH', `${register}/draft`, {
      rules: { ip_tor: { library: 'ip_tor', score: 150 }, ip_velocity: { library: 'ip_velocity', params: { events_1h: 0 } } }, thresholds: { review: 50, decline: 40 },
    }), 400, 'invalid_request');
    expect(bad.errors!.map((e: { path: string }) => e.path).sort()).toEqual(['rules.ip_tor.score', 'rules.ip_velocity.params.events_1h', 'thresholds.review']);
    expectAdminProblem(await send(adminA, 'PATCH', `${register}/draft`, { rules: { ...edit.rules, not_there: { library: 'ip_vpn' } } }), 404, 'resource_not_found');
    expect((await get(adminA, register)).json().draft).toBeNull();

    const saved = await send(adminA, 'PATCH', `${register}/draft`, { ...edit, yaml_sha256: live.yaml_sha256, comment: 'two scores, tighter bands' });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({ status: 'draft', comment: 'two scores, tighter bands', thresholds: { review: 22, decline: 44 } });
    const diff = (await get(analystA, `${register}/diff`)).json();
    expect(diff.rules.changed).toEqual([
      { id: 'email_disposable', changes: [{ property: 'score', from: expect.any(Number), to: 35 }] },
      { id: 'ip_tor', changes: [{ property: 'score', from: 40, to: 45 }] },
    ]);
    expect(diff.rules.added).toEqual([]);
    expect(diff.rules.removed).toEqual([]);
    // Made on the live text, the edit is refused once the draft exists: it changed since.
    expectAdminProblem(await send(adminA, 'PATCH', `${register}/draft`, { ...edit, yaml_sha256: live.yaml_sha256 }), 409, 'conflict');
    expect((await send(adminA, 'PATCH', `${register}/draft`, { rules: { ip_tor: { library: 'ip_tor', score: 46 } }, yaml_sha256: saved.json().yaml_sha256 })).statusCode).toBe(200);
  });

  it('discards a draft, audited with what it held', async () => {
    await send(adminA, 'PUT', `${register}/draft/thresholds`, { review: 30, decline: 60 });
    expect((await send(adminA, 'DELETE', `${register}/draft`)).statusCode).toBe(204);
    expect((await get(adminA, register)).json().draft).toBeNull();
    const [entry] = await t.app.store.audit({ account: 'alpha' });
    expect(entry).toMatchObject({ action: 'rule_set.draft.discard', after: null, before: { yaml: expect.stringContaining('review: 30') } });
    expectAdminProblem(await send(adminA, 'DELETE', `${register}/draft`), 404, 'resource_not_found');
  });
});
