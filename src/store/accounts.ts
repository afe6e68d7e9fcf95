import type { Transaction } from 'kysely';
import { ACCOUNT_ID, ACCOUNT_ID_RULE } from '../keys/account-id.js';
import { generateKey, hashKey, keyIdOf, keyPrefixOf, MAX_KEYS_PER_ACCOUNT } from '../keys/key.js';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import { bumpRevision } from './revision.js';
import type { RuleSeed, RuleSets } from './rule-sets.js';
import type { AccountRow, AccountStatus, ApiKeyRow, Database } from './schema.js';

/**
 * Accounts and their keys (PRODUCT.md "Keys and accounts"). A key is stored as its SHA-256 hash;
 * the key itself exists only in the return value of the call that made it. At most two live keys
 * per account, `API_KEYS`' keys included for the account they serve (`default`).
 */
/** The account `API_KEYS` serves. */
export const DEFAULT_ACCOUNT = 'default';

/** What lists and the audit log show of a key: never the key, never its hash. */
export type KeyInfo = Omit<ApiKeyRow, 'hash'>;

export interface AccountInfo extends AccountRow {
  /** Live keys, oldest first. */
  keys: KeyInfo[];
}

export interface NewKey {
  /** The key itself: show it once, it is not kept. */
  key: string;
  info: KeyInfo;
}

const KEY_COLUMNS = ['id', 'account_id', 'prefix', 'created_at', 'created_by', 'last_used_at', 'revoked_at'] as const;

export class Accounts {
  constructor(
    private readonly engine: Engine,
    private readonly ruleSets: RuleSets,
    private readonly now: () => number,
  ) {}

  async list(): Promise<AccountInfo[]> {
    const db = this.engine.db;
    const [accounts, keys] = await Promise.all([
      db.selectFrom('accounts').selectAll().orderBy('id').execute(),
      db.selectFrom('api_keys').select(KEY_COLUMNS).where('revoked_at', 'is', null).orderBy('created_at').orderBy('id').execute(),
    ]);
    return accounts.map((account) => ({ ...account, keys: keys.filter((k) => k.account_id === account.id) }));
  }

  /** Every account, without keys, by id. */
  async rows(): Promise<AccountRow[]> {
    return this.engine.db.selectFrom('accounts').selectAll().orderBy('id').execute();
  }

  /** The account alone, without its keys: one indexed read. */
  async row(id: string): Promise<AccountRow | undefined> {
    return this.engine.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async get(id: string): Promise<AccountInfo | undefined> {
    return (await this.list()).find((a) => a.id === id);
  }

  /**
   * Creates the account if it does not exist, with its first rule sets (RULES_DIR's, for an account
   * made by a key or the environment); resolves true when it did.
   */
  async ensure(trx: Transaction<Database>, id: string, seed: RuleSeed, actor: string, name = id): Promise<boolean> {
    if (!ACCOUNT_ID.test(id)) throw new StoreRequestError('invalid', `account "${id}": ${ACCOUNT_ID_RULE}`);
    const at = this.now();
    // Replicas starting together may both try: one inserts, the other's insert does nothing.
    const inserted = await trx.insertInto('accounts').values({ id, name, status: 'active', env_keys: 0, created_at: at })
      .onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst();
    if (!inserted) return false;
    await this.ruleSets.seed(trx, id, seed, actor, at);
    await appendAudit(trx, at, { actor, account_id: id, action: 'account.create', target: id, before: null, after: { id, name, status: 'active', event_types: seed.files.map((t) => t.eventType) } });
    await bumpRevision(trx);
    return true;
  }

  /** A new account with its first rule sets; refused when the id is taken. */
  async create(id: string, name: string, seed: RuleSeed, actor: string): Promise<AccountInfo> {
    const created = await this.engine.db.transaction().execute((trx) => this.ensure(trx, id, seed, actor, name));
    if (!created) throw new StoreRequestError('conflict', `account "${id}" already exists`);
    return (await this.get(id))!;
  }

  /**
   * Renames an account, or disables or re-enables it. A disabled account's keys and rule sets leave
   * what every replica serves from its next poll (the snapshot reads active accounts only).
   */
  async update(id: string, change: { name?: string; status?: AccountStatus }, actor: string): Promise<AccountInfo> {
    await this.engine.db.transaction().execute(async (trx) => {
      const before = await this.requireAccount(trx, id);
      const after = { ...before, ...change };
      if (after.name === before.name && after.status === before.status) return;
      await trx.updateTable('accounts').set({ name: after.name, status: after.status }).where('id', '=', id).execute();
      const action = after.status !== before.status ? (after.status === 'disabled' ? 'account.disable' : 'account.enable') : 'account.rename';
      await appendAudit(trx, this.now(), { actor, account_id: id, action, target: id, before: { name: before.name, status: before.status }, after: { name: after.name, status: after.status } });
      if (after.status !== before.status) await bumpRevision(trx);
    });
    return (await this.get(id))!;
  }

  /** A new key for the account, which is created (and seeded) first if it does not exist. */
  async createKey(account: string, by: { actor: string; seed: RuleSeed }): Promise<NewKey & { accountCreated: boolean }> {
    return this.engine.db.transaction().execute(async (trx) => {
      const accountCreated = await this.ensure(trx, account, by.seed, by.actor);
      const row = (await this.engine.lockAccount(trx, account))!;
      const live = await this.liveKeys(trx, account);
      const room = MAX_KEYS_PER_ACCOUNT - row.env_keys - live.length;
      if (room <= 0) {
        const env = row.env_keys > 0 ? ` (${row.env_keys} of them in API_KEYS)` : '';
        throw new StoreRequestError('conflict', `account "${account}" already has ${MAX_KEYS_PER_ACCOUNT} keys${env}; rotate or revoke one first`);
      }
      const created = await this.insertKey(trx, account, by.actor);
      await bumpRevision(trx);
      return { ...created, accountCreated };
    });
  }

  /**
   * Replaces a live key (by default the oldest) with a new one in one transaction: from the
   * revision it bumps, every replica refuses the old key.
   */
  async rotateKey(account: string, by: { actor: string; keyId?: string }): Promise<NewKey & { replaced: KeyInfo }> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const live = await this.liveKeys(trx, account);
      const old = by.keyId === undefined ? live[0] : live.find((k) => k.id === by.keyId);
      if (!old) throw new StoreRequestError('not_found', by.keyId === undefined ? `account "${account}" has no stored key to rotate` : `account "${account}" has no live key ${by.keyId}`);
      const replaced = await this.revoke(trx, account, old, by.actor, 'key.rotate.revoke');
      const created = await this.insertKey(trx, account, by.actor);
      await bumpRevision(trx);
      return { ...created, replaced };
    });
  }

  async revokeKey(account: string, keyId: string, by: { actor: string }): Promise<KeyInfo> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const key = (await this.liveKeys(trx, account)).find((k) => k.id === keyId);
      if (!key) throw new StoreRequestError('not_found', `account "${account}" has no live key ${keyId}`);
      const revoked = await this.revoke(trx, account, key, by.actor, 'key.revoke');
      await bumpRevision(trx);
      return revoked;
    });
  }

  /**
   * Adds keys known only by their hash (an accounts file being imported). A hash already stored
   * is skipped; the limit of two holds.
   */
  async addHashedKeys(trx: Transaction<Database>, account: string, keys: Array<{ id: string; hash: string; created_at: number }>, actor: string): Promise<number> {
    const row = (await this.engine.lockAccount(trx, account))!;
    let added = 0;
    for (const key of keys) {
      const existing = await trx.selectFrom('api_keys').select(['account_id']).where('hash', '=', key.hash).executeTakeFirst();
      if (existing) {
        if (existing.account_id !== account) throw new StoreRequestError('conflict', `key ${key.id} already belongs to account "${existing.account_id}"`);
        continue;
      }
      const live = await this.liveKeys(trx, account);
      if (row.env_keys + live.length >= MAX_KEYS_PER_ACCOUNT) {
        throw new StoreRequestError('conflict', `account "${account}" would have more than ${MAX_KEYS_PER_ACCOUNT} keys`);
      }
      const info: KeyInfo = { id: key.id, account_id: account, prefix: null, created_at: key.created_at, created_by: actor, last_used_at: null, revoked_at: null };
      await trx.insertInto('api_keys').values({ ...info, hash: key.hash }).execute();
      await appendAudit(trx, this.now(), { actor, account_id: account, action: 'key.import', target: key.id, before: null, after: info });
      added += 1;
    }
    if (added > 0) await bumpRevision(trx);
    return added;
  }

  /**
   * At start: `API_KEYS` serves the `default` account, created and seeded if new. Records how many
   * keys it holds (the CLI counts them against the limit) and refuses a start that would give the
   * account more than two keys in all.
   */
  async useEnvironmentKeys(count: number, seed: RuleSeed): Promise<void> {
    await this.engine.db.transaction().execute(async (trx) => {
      if (count > 0) await this.ensure(trx, DEFAULT_ACCOUNT, seed, 'system');
      const row = await this.engine.lockAccount(trx, DEFAULT_ACCOUNT);
      if (!row) return;
      const live = await this.liveKeys(trx, DEFAULT_ACCOUNT);
      if (count + live.length > MAX_KEYS_PER_ACCOUNT) {
        throw new StoreRequestError('conflict',
          `API_KEYS has ${count} key(s) and the store ${live.length} live key(s) (${live.map((k) => k.id).join(', ')}) for account "default": at most ${MAX_KEYS_PER_ACCOUNT} in all. ` +
            'Revoke one with "npm run keys -- revoke --account default --key KEY_ID", or remove one from API_KEYS');
      }
      if (row.env_keys !== count) await trx.updateTable('accounts').set({ env_keys: count }).where('id', '=', DEFAULT_ACCOUNT).execute();
    });
  }

  /** Whether any account has a live stored key (a production start with neither these nor API_KEYS is refused). */
  async anyLiveKey(): Promise<boolean> {
    const row = await this.engine.db.selectFrom('api_keys').select('id').where('revoked_at', 'is', null).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** Last-used times, written at most once a minute per key by the key store; no revision bump, no audit. */
  async touch(uses: Array<{ id: string; at: number }>): Promise<void> {
    if (uses.length === 0) return;
    await this.engine.db.transaction().execute(async (trx) => {
      for (const use of uses) await trx.updateTable('api_keys').set({ last_used_at: use.at }).where('id', '=', use.id).execute();
    });
  }

  private async insertKey(trx: Transaction<Database>, account: string, actor: string): Promise<NewKey> {
    const key = generateKey();
    const hash = hashKey(key);
    const info: KeyInfo = { id: keyIdOf(hash), account_id: account, prefix: keyPrefixOf(key), created_at: this.now(), created_by: actor, last_used_at: null, revoked_at: null };
    await trx.insertInto('api_keys').values({ ...info, hash }).execute();
    await appendAudit(trx, info.created_at, { actor, account_id: account, action: 'key.create', target: info.id, before: null, after: info });
    return { key, info };
  }

  private async revoke(trx: Transaction<Database>, account: string, key: KeyInfo, actor: string, action: string): Promise<KeyInfo> {
    const at = this.now();
    await trx.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', key.id).execute();
    const revoked = { ...key, revoked_at: at };
    await appendAudit(trx, at, { actor, account_id: account, action, target: key.id, before: key, after: revoked });
    return revoked;
  }

  private liveKeys(trx: Transaction<Database>, account: string): Promise<KeyInfo[]> {
    return trx.selectFrom('api_keys').select(KEY_COLUMNS).where('account_id', '=', account).where('revoked_at', 'is', null)
      .orderBy('created_at').orderBy('id').execute();
  }

  private async requireAccount(trx: Transaction<Database>, account: string): Promise<AccountRow> {
    const row = await this.engine.lockAccount(trx, account);
    if (!row) throw new StoreRequestError('not_found', `no account "${account}"`);
    return row;
  }
}
