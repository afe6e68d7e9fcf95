import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/keys/key.js';
import { RuleSetError } from '../../src/rules/rule-file.js';
import { StoreRequestError } from '../../src/store/errors.js';
import type { Store } from '../../src/store/index.js';
import { firstIdAt } from '../../src/store/log-record.js';
import { type LogRecord } from '../../src/core/log-record.js';
import { ENGINES, openTestStore, type EngineName } from '../support/store.js';

/**
 * The store's contract, run against both engines: what the CLI, the service and (later) the admin
 * API rely on. Each test gets a fresh database.
 */
const templates = { files: [{ eventType: 'account_register', yaml: readFileSync('rules/account_register.yaml', 'utf8') }], comment: 'seeded from RULES_DIR' };
const by = { actor: 'cli:test', seed: templates };
const torRule = (score: number) => `rules:\n  - library: ip_tor\n    score: ${score}\n`;

describe.each(ENGINES)('the store on %s', (engine: EngineName) => {
  let store: Store;
  let clock: number;
  beforeEach(async () => {
    clock = Date.parse('2026-11-21T12:00:00Z');
    store = await openTestStore(engine, { now: () => clock });
  });
  afterEach(async () => {
    await store.close();
  });

  describe('accounts and keys', () => {
    it('creates an account with its first key, seeded from the templates, and bumps the change counter', async () => {
      const before = (await store.snapshot()).revision;
      const created = await store.accounts.createKey('acme', by);
      expect(created.accountCreated).toBe(true);
      expect(created.key).toMatch(/^rk_[A-Za-z0-9_-]{43}$/);
      expect(created.info).toEqual({ id: expect.stringMatching(/^key_[0-9a-f]{12}$/), account_id: 'acme', prefix: created.key.slice(0, 9), created_at: clock, created_by: 'cli:test', last_used_at: null, revoked_at: null });
      const snapshot = await store.snapshot();
      expect(snapshot.revision).toBeGreaterThan(before);
      expect(snapshot.keys).toEqual([{ id: created.info.id, hash: hashKey(created.key), account_id: 'acme' }]);
      expect(snapshot.ruleSets).toEqual([expect.objectContaining({ account_id: 'acme', event_type: 'account_register', version: 1, yaml: templates.files[0]!.yaml })]);
    });

    it('holds at most two live keys per account', async () => {
      await store.accounts.createKey('acme', by);
      await store.accounts.createKey('acme', by);
      const third = await store.accounts.createKey('acme', by).catch((e: unknown) => e);
      expect(third).toBeInstanceOf(StoreRequestError);
      expect(third).toMatchObject({ code: 'conflict', message: 'account "acme" already has 2 keys; rotate or revoke one first' });
      expect((await store.accounts.get('acme'))!.keys).toHaveLength(2);
    });

    it('rotates a key in one change: the old one leaves the served keys as the new one enters', async () => {
      const first = await store.accounts.createKey('acme', by);
      clock += 1000;
      const second = await store.accounts.createKey('acme', by);
      const rotated = await store.accounts.rotateKey('acme', { actor: 'cli:test' });
      expect(rotated.replaced.id).toBe(first.info.id); // the oldest, by default
      const served = (await store.snapshot()).keys.map((k) => k.hash).sort();
      expect(served).toEqual([hashKey(second.key), hashKey(rotated.key)].sort());
      await store.accounts.revokeKey('acme', second.info.id, { actor: 'cli:test' });
      expect((await store.snapshot()).keys.map((k) => k.hash)).toEqual([hashKey(rotated.key)]);
      await expect(store.accounts.revokeKey('acme', second.info.id, { actor: 'cli:test' })).rejects.toThrow(/has no live key/);
    });

    it('writes last-used times without bumping the change counter', async () => {
      const created = await store.accounts.createKey('acme', by);
      const revision = (await store.snapshot()).revision;
      await store.accounts.touch([{ id: created.info.id, at: clock + 5 }]);
      expect((await store.accounts.get('acme'))!.keys[0]!.last_used_at).toBe(clock + 5);
      expect((await store.snapshot()).revision).toBe(revision);
    });

    it('audits every change, who, when, before and after, and never a key or its hash', async () => {
      const created = await store.accounts.createKey('acme', by);
      const rotated = await store.accounts.rotateKey('acme', { actor: 'cli:alice' });
      const audit = await store.audit({ account: 'acme' });
      expect(audit.map((a) => [a.action, a.actor])).toEqual([
        ['key.create', 'cli:alice'], ['key.rotate.revoke', 'cli:alice'], ['key.create', 'cli:test'], ['account.create', 'cli:test'],
      ]);
      expect(audit[1]).toMatchObject({ at: clock, target: created.info.id, before: { revoked_at: null }, after: { revoked_at: clock } });
      const text = JSON.stringify(audit);
      for (const key of [created.key, rotated.key]) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(hashKey(key).slice(7));
      }
    });

    it('counts API_KEYS against the limit of the default account', async () => {
      await store.accounts.useEnvironmentKeys(2, templates);
      await expect(store.accounts.createKey('default', by)).rejects.toThrow('account "default" already has 2 keys (2 of them in API_KEYS); rotate or revoke one first');
      await store.accounts.useEnvironmentKeys(1, templates);
      await store.accounts.createKey('default', by);
      await expect(store.accounts.useEnvironmentKeys(2, templates)).rejects.toThrow(/API_KEYS has 2 key\(s\) and the store 1 live key\(s\)/);
    });

    it('refuses an account id that is not 1 to 64 letters, digits, _ . or -', async () => {
      await expect(store.accounts.createKey('../etc', by)).rejects.toThrow(/account "\.\.\/etc": 1 to 64 letters/);
    });
  });

  describe('rule set versions', () => {
    beforeEach(async () => {
      await store.accounts.createKey('acme', by);
    });
    const live = async (eventType = 'account_register') => (await store.ruleSets.published('acme')).find((v) => v.event_type === eventType);

    it('publishes only what changed, as a new version, and archives the one it replaces', async () => {
      const first = await store.ruleSets.apply('acme', [{ eventType: 'account_register', yaml: torRule(10) }, { eventType: 'account_login', yaml: torRule(20) }], { actor: 'cli:test', comment: 'tor' });
      expect(first).toEqual([
        { eventType: 'account_register', version: 2, outcome: 'published' },
        { eventType: 'account_login', version: 1, outcome: 'published' },
      ]);
      const again = await store.ruleSets.apply('acme', [{ eventType: 'account_register', yaml: torRule(10) }], { actor: 'cli:test', comment: null });
      expect(again).toEqual([{ eventType: 'account_register', version: 2, outcome: 'unchanged' }]);
      expect((await store.ruleSets.list('acme', 'account_register')).map((v) => [v.version, v.status, v.comment])).toEqual([
        [2, 'published', 'tor'], [1, 'archived', 'seeded from RULES_DIR'],
      ]);
    });

    it('refuses an invalid file with its line and path, and stores nothing of the batch', async () => {
      const revision = (await store.snapshot()).revision;
      const error = await store.ruleSets.apply('acme', [
        { eventType: 'account_login', yaml: torRule(10) },
        { eventType: 'account_register', yaml: 'rules:\n  - library: ip_tor\n    score: lots\n' },
      ], { actor: 'cli:test', comment: null }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RuleSetError);
      expect((error as Error).message).toMatch(/acme\/account_register\.yaml:3:5 rules\[0\]\.score: /);
      expect((await store.snapshot()).revision).toBe(revision);
      expect(await store.ruleSets.list('acme', 'account_login')).toEqual([]);
    });

    it('publishes a draft and rolls back to an earlier version, one live version at every step', async () => {
      const draft = await store.ruleSets.saveDraft('acme', { eventType: 'account_register', yaml: torRule(30) }, { actor: 'cli:test', comment: 'draft' });
      expect(draft).toMatchObject({ version: 2, status: 'draft' });
      // Editing the draft keeps its number: there is one draft at a time.
      expect(await store.ruleSets.saveDraft('acme', { eventType: 'account_register', yaml: torRule(35) }, { actor: 'cli:test', comment: 'draft 2' })).toMatchObject({ version: 2, status: 'draft' });
      expect((await live())!.version).toBe(1);
      await store.ruleSets.publish('acme', 'account_register', 2, { actor: 'cli:test', comment: 'go' });
      expect(await live()).toMatchObject({ version: 2, yaml: torRule(35), comment: 'go' });
      // A rollback publishes the earlier text as a new version: history only grows.
      await store.ruleSets.rollback('acme', 'account_register', 1, { actor: 'cli:bob', comment: null });
      expect(await live()).toMatchObject({ version: 3, yaml: templates.files[0]!.yaml, comment: 'rollback to version 1', author: 'cli:bob' });
      expect((await store.ruleSets.list('acme')).filter((v) => v.status === 'published')).toHaveLength(1);
      await expect(store.ruleSets.rollback('acme', 'account_register', 3, { actor: 'x', comment: null })).rejects.toThrow(/is the published one/);
      await expect(store.ruleSets.publish('acme', 'account_register', 1, { actor: 'x', comment: null })).rejects.toThrow(/archived: roll back to it instead/);
      await expect(store.ruleSets.publish('acme', 'account_register', 9, { actor: 'x', comment: null })).rejects.toMatchObject({ code: 'not_found' });
      expect((await store.audit({ account: 'acme' })).slice(0, 2).map((a) => [a.action, a.before, a.after])).toEqual([
        ['rule_set.rollback', { version: 2 }, { version: 3, from_version: 1, comment: 'rollback to version 1' }],
        ['rule_set.publish', { version: 1 }, { version: 2, comment: 'go' }],
      ]);
    });

    it('lets the database itself refuse a second published version', async () => {
      await expect(
        store.engine.db.insertInto('rule_set_versions').values({ account_id: 'acme', event_type: 'account_register', version: 9, status: 'published', yaml: torRule(1), author: 'x', comment: null, created_at: 1, published_at: 1 }).execute(),
      ).rejects.toThrow(/unique/i);
    });

    it('refuses rule sets for an account that does not exist', async () => {
      await expect(store.ruleSets.apply('nobody', [{ eventType: 'account_login', yaml: torRule(1) }], { actor: 'x', comment: null })).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('the evaluation log', () => {
    const record = (n: number, at: number, overrides: Partial<LogRecord> = {}): LogRecord => {
      const id = `${firstIdAt(at).slice(0, 14)}7${String(n).padStart(3, '0')}-8000-${String(n).padStart(12, '0')}`;
      return {
        id, account_id: 'acme', event_type: 'account_register', email: `User${n}@Example.com`, email_domain: 'example.com', ip: n % 2 ? '203.0.113.7' : '2001:db8::7',
        user_id: n % 3 === 0 ? `u${n}` : null, device_hash: 'dev-1', state: 'approve', fraud_score: n, rule_set_version: 1, fired: n % 4 === 0 ? ['ip_tor'] : [],
        request: JSON.stringify({ ip: '203.0.113.7', email: `User${n}@Example.com`, event_type: 'account_register' }),
        response: JSON.stringify({ id, email: { disposable: false }, ip: { is_tor: null }, unavailable: ['ip.tor'] }),
        shadow: null,
        ...overrides,
      };
    };

    it('writes records in batches, indexed by id, e-mail, IP, user and device', async () => {
      for (let n = 1; n <= 12; n++) store.log.record(record(n, clock - n * 1000));
      await store.log.flush();
      expect(store.log.stats()).toMatchObject({ enabled: true, queued: 0, queued_bytes: 0, written: 12, dropped: 0, failed: 0 });
      const db = store.engine.db;
      const one = await db.selectFrom('evaluations').selectAll().where('id', '=', record(3, clock - 3000).id).executeTakeFirstOrThrow();
      expect(one).toMatchObject({ account_id: 'acme', evaluated_at: clock - 3000, email: 'user3@example.com', ip_key: '00000000000000000000ffffcb007107', user_id: 'u3', fraud_score: 3, rule_set_version: 1 });
      // The answer is kept as sent, facts and all, so a replay needs no enrichment.
      const response = typeof one.response === 'string' ? JSON.parse(one.response) : one.response;
      expect(response).toEqual({ id: one.id, email: { disposable: false }, ip: { is_tor: null }, unavailable: ['ip.tor'] });
      const count = async (column: 'email' | 'ip_key' | 'user_id' | 'device_hash', value: string) =>
        (await db.selectFrom('evaluations').select('id').where('account_id', '=', 'acme').where(column, '=', value).orderBy('id', 'desc').execute()).length;
      expect(await count('email', 'user5@example.com')).toBe(1);
      expect(await count('ip_key', '20010db8000000000000000000000007')).toBe(6);
      expect(await count('user_id', 'u6')).toBe(1);
      expect(await count('device_hash', 'dev-1')).toBe(12);
    });

    it('keeps nothing with RETENTION_DAYS=0: no record is even queued', async () => {
      const none = await openTestStore(engine, { retentionDays: 0 });
      try {
        none.log.record(record(1, clock));
        await none.log.flush();
        expect(none.log.stats()).toEqual({ enabled: false, queued: 0, queued_bytes: 0, written: 0, dropped: 0, failed: 0, pruned: 0 });
        expect(await none.engine.db.selectFrom('evaluations').select('id').execute()).toEqual([]);
      } finally {
        await none.close();
      }
    });

    it('prunes what is older than RETENTION_DAYS, in batches, and keeps the rest', async () => {
      const day = 86_400_000;
      for (let n = 1; n <= 7; n++) store.log.record(record(n, clock - 31 * day - n));
      for (let n = 8; n <= 10; n++) store.log.record(record(n, clock - 29 * day));
      await store.log.flush();
      expect(await store.log.prune()).toBe(7);
      const left = await store.engine.db.selectFrom('evaluations').select('fraud_score').orderBy('fraud_score').execute();
      expect(left.map((r) => r.fraud_score)).toEqual([8, 9, 10]);
      expect(store.log.stats().pruned).toBe(7);
      // The rules that fired go with their evaluations (n = 4 and 8 fired one each; 4 was pruned).
      const fired = await store.engine.db.selectFrom('evaluation_rules').selectAll().execute();
      expect(fired).toEqual([{ account_id: 'acme', rule_id: 'ip_tor', evaluation_id: record(8, clock - 29 * day).id }]);
    });

    it('writes one row per fired rule in the batch of its evaluation, found by account and rule, newest first', async () => {
      const fired = (n: number) => (n % 3 === 0 ? ['email_disposable', 'custom_rule'] : n % 2 === 0 ? ['custom_rule'] : []);
      for (let n = 1; n <= 9; n++) store.log.record(record(n, clock - n * 1000, { fired: fired(n) }));
      await store.log.flush();
      const ids = async (rule: string) => (await store.engine.db.selectFrom('evaluation_rules').select('evaluation_id')
        .where('account_id', '=', 'acme').where('rule_id', '=', rule).orderBy('evaluation_id', 'desc').execute()).map((r) => r.evaluation_id);
      expect(await ids('custom_rule')).toEqual([2, 3, 4, 6, 8, 9].map((n) => record(n, clock - n * 1000).id));
      expect(await ids('email_disposable')).toEqual([3, 6, 9].map((n) => record(n, clock - n * 1000).id));
    });
  });
});
