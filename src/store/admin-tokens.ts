import { hash, randomBytes } from 'node:crypto';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import type { AdminTokenRole, AdminTokenRow } from './schema.js';

/**
 * Admin tokens: automation's credential for `/admin/v1` (`Authorization: Bearer rat_…`). 256
 * random bits, stored as SHA-256 and shown once; named, scoped to one account with a role (or
 * instance-wide with the `owner` role), optionally expiring, revocable. A request looks its token
 * up in the store, so a revoked token is refused by every replica from the next request on.
 */
export const ADMIN_TOKEN_PREFIX = 'rat_';

export type AdminTokenInfo = Omit<AdminTokenRow, 'hash'>;

export interface NewAdminToken {
  /** The token itself: shown once, not kept. */
  token: string;
  info: AdminTokenInfo;
}

export const hashAdminToken = (token: string) => `sha256:${hash('sha256', token, 'hex')}`;

const COLUMNS = ['id', 'name', 'prefix', 'account_id', 'role', 'created_at', 'created_by', 'expires_at', 'last_used_at', 'revoked_at'] as const;

export class AdminTokens {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  async create(token: { name: string; account: string | null; role: AdminTokenRole; expiresAt: number | null }, actor: string): Promise<NewAdminToken> {
    const secret = ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const digest = hashAdminToken(secret);
    const info: AdminTokenInfo = {
      id: `tok_${digest.slice('sha256:'.length, 'sha256:'.length + 12)}`, name: token.name, prefix: secret.slice(0, ADMIN_TOKEN_PREFIX.length + 6),
      account_id: token.account, role: token.role, created_at: this.now(), created_by: actor, expires_at: token.expiresAt, last_used_at: null, revoked_at: null,
    };
    await this.engine.db.transaction().execute(async (trx) => {
      if (token.account !== null && !(await this.engine.lockAccount(trx, token.account))) throw new StoreRequestError('not_found', `no account "${token.account}"`);
      await trx.insertInto('admin_tokens').values({ ...info, hash: digest }).execute();
      await appendAudit(trx, info.created_at, { actor, account_id: token.account, action: 'admin_token.create', target: info.id, before: null, after: info });
    });
    return { token: secret, info };
  }

  /** The live token with this hash (not revoked, not expired), if any. */
  async find(digest: string, at: number): Promise<AdminTokenInfo | undefined> {
    return this.engine.db.selectFrom('admin_tokens').select(COLUMNS).where('hash', '=', digest).where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)])).executeTakeFirst();
  }

  /** Live tokens, newest first: all of them, or one account's. */
  async list(account?: string): Promise<AdminTokenInfo[]> {
    let query = this.engine.db.selectFrom('admin_tokens').select(COLUMNS).where('revoked_at', 'is', null).orderBy('created_at', 'desc').orderBy('id');
    if (account !== undefined) query = query.where('account_id', '=', account);
    return query.execute();
  }

  /** Revokes a live token; `account` limits it to that account's tokens (an account admin's view). */
  async revoke(id: string, actor: string, account?: string): Promise<AdminTokenInfo> {
    return this.engine.db.transaction().execute(async (trx) => {
      const token = await trx.selectFrom('admin_tokens').select(COLUMNS).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      if (!token || (account !== undefined && token.account_id !== account)) throw new StoreRequestError('not_found', `no live admin token ${id}`);
      const at = this.now();
      await trx.updateTable('admin_tokens').set({ revoked_at: at }).where('id', '=', id).execute();
      const revoked = { ...token, revoked_at: at };
      await appendAudit(trx, at, { actor, account_id: token.account_id, action: 'admin_token.revoke', target: id, before: token, after: revoked });
      return revoked;
    });
  }

  async touch(id: string, at: number): Promise<void> {
    await this.engine.db.updateTable('admin_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
