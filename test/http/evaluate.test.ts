import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as keysCli } from '../../src/cli/keys.js';
import { generateKey, hashKey, keyIdOf } from '../../src/keys/key.js';
import { run as rulesCli } from '../../src/cli/rules.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { freshDatabaseUrl } from '../support/store.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

function rulesDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'risk-rules-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const signup = `
thresholds: { review: 20, decline: 40 }
rules:
  - id: bot_name
    name: Name looks generated
    score: 25
    when: { field: user.first_name, matches: "^[a-z]{2}[0-9]{4,}$" }
  - id: internal_range
    name: Address in our test range
    score: 30
    when: { field: ip.address, cidr: [203.0.113.0/24, "2001:db8::/32"] }
  - id: corporate_domain
    name: Trusted corporate domain
    score: -100
    when: { field: email.domain, ends_with: .acme.example }
  - id: no_cookies
    name: Cookies disabled
    score: 15
    mode: dry_run
    when: { field: device_intelligence.cookie_enabled, equals: false }
`;

const evaluate = (body: object) =>
  t!.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: body });

describe('POST /v1/risk/evaluate with a custom rule set', () => {
  it('sums fired rules, picks the band, and reports dry-run rules apart', async () => {
    t = await startTestApp({ RULES_DIR: rulesDir({ 'signup.yaml': signup }) });
    const response = await evaluate(
      evaluationBody({
        event_type: 'signup',
        ip: '203.0.113.7',
        user: { first_name: 'xk20931' },
        device_intelligence: { cookie_enabled: false },
      }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = response.json();
    expect(body.score).toEqual({
      details: [
        { rule_id: 'bot_name', rule_name: 'Name looks generated', rule_type: 'static', score: 25 },
        { rule_id: 'internal_range', rule_name: 'Address in our test range', rule_type: 'static', score: 30 },
      ],
      fraud_score: 55,
      state: 'decline',
    });
    expect(body.dry_run).toEqual([{ rule_id: 'no_cookies', rule_name: 'Cookies disabled', rule_type: 'static', score: 15 }]);
    expect(body.event_type).toBe('signup');
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Date.parse(body.evaluated_at)).not.toBeNaN();
    expect(body.took_ms).toBeGreaterThanOrEqual(0);
  });

  it('lets a negative rule lower the score, clamped at 0', async () => {
    t = await startTestApp({ RULES_DIR: rulesDir({ 'signup.yaml': signup }) });
    const body = (await evaluate(evaluationBody({ event_type: 'signup', ip: '2001:db8::1', email: 'ceo@hq.acme.example' }))).json();
    expect(body.score.details.map((d: { score: number }) => d.score)).toEqual([30, -100]);
    expect(body.score).toMatchObject({ fraud_score: 0, state: 'approve' });
  });

  it('accepts only the event types that have a rule file', async () => {
    t = await startTestApp({ RULES_DIR: rulesDir({ 'signup.yaml': signup }) });
    const response = await evaluate(evaluationBody({ event_type: 'account_register' }));
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([{ path: 'event_type', message: 'must be one of: signup' }]);
  });

  it('logs one line per evaluation with its outcome and no personal data', async () => {
    t = await startTestApp({ RULES_DIR: rulesDir({ 'signup.yaml': signup }) });
    const body = (await evaluate(evaluationBody({ event_type: 'signup', ip: '203.0.113.7', email: 'Jane.Doe+x@Example.COM' }))).json();
    const lines = t.logs.lines.filter((l) => l.msg === 'evaluation');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      status: 200,
      evaluation: {
        id: body.id,
        account: 'default',
        event_type: 'signup',
        fraud_score: 30,
        state: 'review',
        rules: ['Address in our test range'],
        email_domain: 'example.com',
        unavailable: expect.any(Array),
        took_ms: body.took_ms,
      },
    });
    expect(t.logs.raw.join('\n')).not.toMatch(/jane\.doe/i);
  });
});

describe('POST /v1/risk/evaluate with the shipped rules', () => {
  it('answers with every PRODUCT.md field', async () => {
    t = await startTestApp();
    const body = (await evaluate(evaluationBody())).json();
    expect(Object.keys(body).sort()).toEqual(
      ['dry_run', 'email', 'evaluated_at', 'event_type', 'history', 'id', 'ip', 'lists', 'score', 'signals', 'took_ms', 'unavailable'].sort(),
    );
    expect(Object.keys(body.email).sort()).toEqual(
      ['address', 'canonical', 'deliverability', 'deliverable', 'disposable', 'domain', 'free_provider', 'mx_records', 'normalized', 'relay', 'role_account', 'suggested_domain'].sort(),
    );
    expect(Object.keys(body.ip).sort()).toEqual(
      ['accuracy_radius_km', 'address', 'as_organization', 'asn', 'city', 'country', 'country_code', 'embedded_ipv4', 'is_bogon', 'is_datacenter', 'is_proxy', 'is_tor', 'is_vpn', 'latitude', 'longitude', 'postal_code', 'region', 'time_zone', 'transition', 'version'].sort(),
    );
  });

  it('reads an IPv4-mapped IPv6 address as IPv4', async () => {
    t = await startTestApp();
    const body = (await evaluate(evaluationBody({ ip: '::ffff:81.2.69.160' }))).json();
    expect(body.ip).toMatchObject({ address: '81.2.69.160', version: 4 });
  });
});

describe('an account with its own rule sets', () => {
  it('is evaluated with them, published with "npm run rules -- apply"', async () => {
    const url = await freshDatabaseUrl('sqlite');
    const printed: string[] = [];
    const env = { DATABASE_URL: url, RULES_DIR: 'rules' };
    await keysCli(['create', '--account', 'acme'], (l) => printed.push(l), () => {}, env);
    expect(await rulesCli(['apply', rulesDir({ 'signup.yaml': signup }), '--account', 'acme'], (l) => printed.push(l), () => {}, env)).toBe(0);
    expect(printed[1]).toBe('signup: published as version 1');
    t = await startTestApp({ API_KEYS: KEY_A, DATABASE_URL: url });
    const acme = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(printed[0]!), payload: evaluationBody({ event_type: 'signup', ip: '203.0.113.9' }) });
    expect(acme.statusCode).toBe(200);
    expect(acme.json().score.fraud_score).toBe(30);
    // The default account has only the shipped rule sets.
    expect((await evaluate(evaluationBody({ event_type: 'signup' }))).json().errors).toEqual([
      { path: 'event_type', message: 'must be one of: account_login, account_register, account_update, password_reset' },
    ]);
  });

  it('stops the start when an accounts file names a rules directory that is missing, naming it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'risk-keys-')), 'accounts.json');
    const key = generateKey();
    const hash = hashKey(key);
    writeFileSync(file, JSON.stringify({ accounts: [{ id: 'acme', rules_dir: join(tmpdir(), 'no-such-rules-dir-for-acme'), keys: [{ id: keyIdOf(hash), hash, created_at: new Date().toISOString() }] }] }));
    await expect(startTestApp({ API_KEYS: '', ACCOUNTS_FILE: file })).rejects.toThrow(/no-such-rules-dir-for-acme/);
  });
});
