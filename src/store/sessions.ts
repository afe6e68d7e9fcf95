import { appendAudit, type AuditEntry } from './audit.js';
import type { Engine } from './engine.js';
import type { UserRow } from './schema.js';

/**
 * Console sessions, by the SHA-256 of their id (the id is only in the user's cookie). A look-up
 * returns the session with its user's current state, so a disabled user or a changed role counts
 * from the very next request, in every replica.
 */
export interface SessionLookup {
  id_hash: string;
  user_id: string;
  created_at: number;
  last_seen_at: number;
  user: Pick<UserRow, 'email' | 'status' | 'owner' | 'password_change_required' | 'two_factor_required'>;
}

export class Sessions {
  constructor(private readonly engine: Engine) {}

  /** A new session; with `audit`, recorded in the audit log in the same transaction (a single sign-on). */
  async create(idHash: string, userId: string, at: number, audit?: AuditEntry): Promise<void> {
    if (audit === undefined) {
      await this.engine.db.insertInto('sessions').values({ id_hash: idHash, user_id: userId, created_at: at, last_seen_at: at }).execute();
      return;
    }
    await this.engine.db.transaction().execute(async (trx) => {
      await trx.insertInto('sessions').values({ id_hash: idHash, user_id: userId, created_at: at, last_seen_at: at }).execute();
      await appendAudit(trx, at, audit);
    });
  }

  /** Records a refused single sign-on in the audit log (no session, no user). */
  async auditRefusal(at: number, audit: AuditEntry): Promise<void> {
    await this.engine.db.transaction().execute((trx) => appendAudit(trx, at, audit));
  }

  async find(idHash: string): Promise<SessionLookup | undefined> {
    const row = await this.engine.db.selectFrom('sessions').innerJoin('users', 'users.id', 'sessions.user_id')
      .select(['sessions.id_hash', 'sessions.user_id', 'sessions.created_at', 'sessions.last_seen_at', 'users.email', 'users.status', 'users.owner', 'users.password_change_required', 'users.two_factor_required'])
      .where('sessions.id_hash', '=', idHash).executeTakeFirst();
    if (!row) return undefined;
    const { email, status, owner, password_change_required, two_factor_required, ...session } = row;
    return { ...session, user: { email, status, owner, password_change_required, two_factor_required } };
  }

  async touch(idHash: string, at: number): Promise<void> {
    await this.engine.db.updateTable('sessions').set({ last_seen_at: at }).where('id_hash', '=', idHash).execute();
  }

  async delete(idHash: string): Promise<void> {
    await this.engine.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  }

  /** Removes sessions past either expiry; resolves with how many. */
  async prune(createdBefore: number, seenBefore: number): Promise<number> {
    const result = await this.engine.db.deleteFrom('sessions')
      .where((eb) => eb.or([eb('created_at', '<', createdBefore), eb('last_seen_at', '<', seenBefore)])).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
