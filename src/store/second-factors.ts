import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import type { TotpFactorRow } from './schema.js';

/**
 * Console users' second factors: a TOTP authenticator and its recovery codes (migration 0011).
 * Spending a code is one conditional UPDATE, so two replicas given the same code accept it once.
 * Enrolment, its confirmation and a reset are audited; a code used at login is not (the login is).
 */
export class SecondFactors {
  constructor(private readonly engine: Engine) {}

  async totp(userId: string): Promise<TotpFactorRow | undefined> {
    return this.engine.db.selectFrom('totp_factors').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** A new, unconfirmed secret; replaces an unconfirmed one. Resolves false when a confirmed one exists. */
  async startTotp(userId: string, secret: string, at: number): Promise<boolean> {
    return this.engine.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('totp_factors').select('confirmed_at').where('user_id', '=', userId).executeTakeFirst();
      if (existing?.confirmed_at != null) return false;
      await trx.deleteFrom('totp_factors').where('user_id', '=', userId).execute();
      await trx.insertInto('totp_factors').values({ user_id: userId, secret, created_at: at, confirmed_at: null, last_step: 0 }).execute();
      await appendAudit(trx, at, { actor: `user:${userId}`, account_id: null, action: 'user.totp.start', target: userId, before: null, after: null });
      return true;
    });
  }

  /** Confirms the enrolment with the step of a code that matched, and replaces the recovery codes. */
  async confirmTotp(userId: string, step: number, recoveryHashes: string[], at: number): Promise<boolean> {
    return this.engine.db.transaction().execute(async (trx) => {
      const done = await trx.updateTable('totp_factors').set({ confirmed_at: at, last_step: step })
        .where('user_id', '=', userId).where('confirmed_at', 'is', null).where('last_step', '<', step).executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) return false;
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      await trx.insertInto('recovery_codes').values(recoveryHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null }))).execute();
      await appendAudit(trx, at, { actor: `user:${userId}`, account_id: null, action: 'user.totp.enrol', target: userId, before: null, after: { recovery_codes: recoveryHashes.length } });
      return true;
    });
  }

  /** Accepts a code's time step once: false when that step, or a later one, was accepted before. */
  async spendStep(userId: string, step: number): Promise<boolean> {
    const done = await this.engine.db.updateTable('totp_factors').set({ last_step: step })
      .where('user_id', '=', userId).where('confirmed_at', 'is not', null).where('last_step', '<', step).executeTakeFirst();
    return Number(done.numUpdatedRows) === 1;
  }

  /** Spends a recovery code; false when it is unknown or spent. Audited, with how many are left. */
  async spendRecoveryCode(userId: string, codeHash: string, at: number): Promise<boolean> {
    return this.engine.db.transaction().execute(async (trx) => {
      const done = await trx.updateTable('recovery_codes').set({ used_at: at })
        .where('user_id', '=', userId).where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) return false;
      const left = await trx.selectFrom('recovery_codes').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
      await appendAudit(trx, at, { actor: `user:${userId}`, account_id: null, action: 'user.recovery_code.use', target: userId, before: null, after: { left: Number(left.n) } });
      return true;
    });
  }

  /** The users with a confirmed authenticator (the owners' list of users shows who has one). */
  async confirmedUsers(): Promise<Set<string>> {
    const rows = await this.engine.db.selectFrom('totp_factors').select('user_id').where('confirmed_at', 'is not', null).execute();
    return new Set(rows.map((r) => r.user_id));
  }

  async recoveryCodesLeft(userId: string): Promise<number> {
    const row = await this.engine.db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** An owner's reset: the factor and codes go, and the user's sessions end. Resolves false when there was none. */
  async reset(userId: string, actor: string, at: number): Promise<boolean> {
    return this.engine.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('totp_factors').where('user_id', '=', userId).executeTakeFirst();
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      if (Number(gone.numDeletedRows) === 0) return false;
      await trx.deleteFrom('sessions').where('user_id', '=', userId).execute();
      await appendAudit(trx, at, { actor, account_id: null, action: 'user.totp.reset', target: userId, before: null, after: null });
      return true;
    });
  }
}
