import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import type { AccountRole, Database, UserRow, UserStatus } from './schema.js';

/**
 * Console users and their roles per account (PRODUCT.md "Admin API and console"). A user is found
 * by the lower-cased e-mail address they log in with; the password hash never leaves this module
 * but through `credentials`, and never reaches the audit log. Every change is audited in its own
 * transaction. Changing a password or disabling a user ends their sessions in the same transaction,
 * and every request reads the session and the user afresh, so every replica refuses at once.
 */
export interface UserInfo {
  id: string;
  email: string;
  owner: boolean;
  status: UserStatus;
  password_change_required: boolean;
  /** An owner requires two-factor of this user (besides TWO_FACTOR_REQUIRED). */
  two_factor_required: boolean;
  created_at: number;
  created_by: string;
  memberships: Array<{ account_id: string; role: AccountRole }>;
}

export interface NewUser {
  email: string;
  passwordHash: string;
  owner: boolean;
  passwordChangeRequired: boolean;
  membership?: { account: string; role: AccountRole };
}

export interface Credentials {
  id: string;
  password_hash: string;
  status: UserStatus;
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

const newUserId = () => `usr_${randomBytes(8).toString('hex')}`;

const USER_COLUMNS = ['id', 'email', 'owner', 'status', 'password_change_required', 'two_factor_required', 'created_at', 'created_by'] as const;
type UserColumns = Pick<UserRow, (typeof USER_COLUMNS)[number]>;

const info = (row: UserColumns, memberships: UserInfo['memberships']): UserInfo => ({
  ...row, owner: row.owner === 1, password_change_required: row.password_change_required === 1, two_factor_required: row.two_factor_required === 1, memberships,
});

/** What the audit log keeps of a user: never the password hash. */
const audited = (user: UserInfo) => ({ id: user.id, email: user.email, owner: user.owner, status: user.status, two_factor_required: user.two_factor_required });

export class Users {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  async count(): Promise<number> {
    const row = await this.engine.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The hash to check a password against, or undefined for an unknown address. */
  async credentials(email: string): Promise<Credentials | undefined> {
    return this.engine.db.selectFrom('users').select(['id', 'password_hash', 'status']).where('email', '=', normaliseEmail(email)).executeTakeFirst();
  }

  async passwordHash(id: string): Promise<string | undefined> {
    return (await this.engine.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst())?.password_hash;
  }

  async get(id: string, db: Kysely<Database> = this.engine.db): Promise<UserInfo | undefined> {
    const row = await db.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    const memberships = await db.selectFrom('memberships').select(['account_id', 'role']).where('user_id', '=', id).orderBy('account_id').execute();
    return info(row, memberships);
  }

  async memberships(id: string): Promise<UserInfo['memberships']> {
    return this.engine.db.selectFrom('memberships').select(['account_id', 'role']).where('user_id', '=', id).orderBy('account_id').execute();
  }

  async byEmail(email: string): Promise<UserInfo | undefined> {
    const row = await this.engine.db.selectFrom('users').select('id').where('email', '=', normaliseEmail(email)).executeTakeFirst();
    return row ? this.get(row.id) : undefined;
  }

  /** Every user (instance owners), or the members of one account, with the memberships the caller may see. */
  async list(account?: string): Promise<UserInfo[]> {
    const db = this.engine.db;
    let users = db.selectFrom('users').select(USER_COLUMNS).orderBy('email');
    let memberships = db.selectFrom('memberships').select(['user_id', 'account_id', 'role']).orderBy('account_id');
    if (account !== undefined) {
      users = users.where('id', 'in', db.selectFrom('memberships').select('user_id').where('account_id', '=', account));
      // A member of A sees a colleague's role in A, never which other accounts the colleague belongs to.
      memberships = memberships.where('account_id', '=', account);
    }
    const [rows, all] = await Promise.all([users.execute(), memberships.execute()]);
    return rows.map((row) => info(row, all.filter((m) => m.user_id === row.id).map(({ account_id, role }) => ({ account_id, role }))));
  }

  /** A new user; the e-mail address must be free. */
  async create(user: NewUser, actor: string): Promise<UserInfo> {
    return this.engine.db.transaction().execute((trx) => this.createIn(trx, user, actor));
  }

  /** `create` inside a transaction the caller holds (the first owner's setup). */
  async createIn(trx: Transaction<Database>, user: NewUser, actor: string): Promise<UserInfo> {
    const created = await this.insert(trx, user, actor);
    if (user.membership) await this.insertMembership(trx, created.id, user.membership.account, user.membership.role, actor);
    return (await this.get(created.id, trx))!;
  }

  async setPassword(id: string, passwordHash: string, changeRequired: boolean, by: { actor: string; keepSession?: string }): Promise<void> {
    await this.engine.db.transaction().execute(async (trx) => {
      const user = await this.require(trx, id);
      await trx.updateTable('users').set({ password_hash: passwordHash, password_change_required: changeRequired ? 1 : 0 }).where('id', '=', id).execute();
      let sessions = trx.deleteFrom('sessions').where('user_id', '=', id);
      if (by.keepSession !== undefined) sessions = sessions.where('id_hash', '!=', by.keepSession);
      await sessions.execute();
      await appendAudit(trx, this.now(), {
        actor: by.actor, account_id: null, action: changeRequired ? 'user.password.reset' : 'user.password.change', target: id,
        before: { password_change_required: user.password_change_required }, after: { password_change_required: changeRequired },
      });
    });
  }

  /** Changes status, owner or the two-factor requirement; disabling ends every session of the user in the same transaction. */
  async update(id: string, change: { status?: UserStatus; owner?: boolean; two_factor_required?: boolean }, actor: string): Promise<UserInfo> {
    return this.engine.db.transaction().execute(async (trx) => {
      const before = await this.require(trx, id);
      const set: Partial<UserRow> = {};
      if (change.status !== undefined) set.status = change.status;
      if (change.owner !== undefined) set.owner = change.owner ? 1 : 0;
      if (change.two_factor_required !== undefined) set.two_factor_required = change.two_factor_required ? 1 : 0;
      if (Object.keys(set).length > 0) await trx.updateTable('users').set(set).where('id', '=', id).execute();
      if (change.status === 'disabled') await trx.deleteFrom('sessions').where('user_id', '=', id).execute();
      const after = (await this.get(id, trx))!;
      const activeOwner = (u: UserInfo) => u.owner && u.status === 'active';
      if (activeOwner(before) && !activeOwner(after)) await this.requireAnotherOwner(trx, id);
      await appendAudit(trx, this.now(), { actor, account_id: null, action: 'user.update', target: id, before: audited(before), after: audited(after) });
      return after;
    });
  }

  /** Adds the user to the account, or changes their role in it. */
  async setMembership(account: string, userId: string, role: AccountRole, actor: string): Promise<UserInfo> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.require(trx, userId);
      const existing = await trx.selectFrom('memberships').select('role').where('user_id', '=', userId).where('account_id', '=', account).executeTakeFirst();
      if (existing) {
        await trx.updateTable('memberships').set({ role }).where('user_id', '=', userId).where('account_id', '=', account).execute();
        await appendAudit(trx, this.now(), { actor, account_id: account, action: 'membership.update', target: userId, before: { role: existing.role }, after: { role } });
      } else {
        await this.insertMembership(trx, userId, account, role, actor);
      }
      return (await this.get(userId, trx))!;
    });
  }

  async removeMembership(account: string, userId: string, actor: string): Promise<void> {
    await this.engine.db.transaction().execute(async (trx) => {
      const removed = await trx.deleteFrom('memberships').where('user_id', '=', userId).where('account_id', '=', account).returning('role').executeTakeFirst();
      if (!removed) throw new StoreRequestError('not_found', `no member ${userId} in account "${account}"`);
      await appendAudit(trx, this.now(), { actor, account_id: account, action: 'membership.remove', target: userId, before: { role: removed.role }, after: null });
    });
  }

  private async insert(trx: Transaction<Database>, user: { email: string; passwordHash: string; owner: boolean; passwordChangeRequired: boolean }, actor: string): Promise<{ id: string }> {
    const email = normaliseEmail(user.email);
    const taken = await trx.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    if (taken) throw new StoreRequestError('conflict', `a user with the e-mail address ${email} already exists`);
    const row: UserRow = {
      id: newUserId(), email, password_hash: user.passwordHash, password_change_required: user.passwordChangeRequired ? 1 : 0,
      owner: user.owner ? 1 : 0, status: 'active', created_at: this.now(), created_by: actor, two_factor_required: 0,
    };
    await trx.insertInto('users').values(row).execute();
    await appendAudit(trx, row.created_at, { actor, account_id: null, action: 'user.create', target: row.id, before: null, after: { id: row.id, email, owner: user.owner, status: row.status } });
    return row;
  }

  private async insertMembership(trx: Transaction<Database>, userId: string, account: string, role: AccountRole, actor: string): Promise<void> {
    if (!(await this.engine.lockAccount(trx, account))) throw new StoreRequestError('not_found', `no account "${account}"`);
    const at = this.now();
    await trx.insertInto('memberships').values({ user_id: userId, account_id: account, role, created_at: at }).execute();
    await appendAudit(trx, at, { actor, account_id: account, action: 'membership.create', target: userId, before: null, after: { role } });
  }

  private async require(trx: Transaction<Database>, id: string): Promise<UserInfo> {
    const user = await this.get(id, trx);
    if (!user) throw new StoreRequestError('not_found', `no user ${id}`);
    return user;
  }

  /** An instance keeps at least one active owner: nobody could manage accounts and users otherwise. */
  private async requireAnotherOwner(trx: Transaction<Database>, id: string): Promise<void> {
    const other = await trx.selectFrom('users').select('id').where('owner', '=', 1).where('status', '=', 'active').where('id', '!=', id).executeTakeFirst();
    if (!other) throw new StoreRequestError('conflict', 'the instance needs at least one active owner; make another user owner first');
  }
}
