import { types, type Migration } from './types.js';

/**
 * TOTP two-factor (issue 26). `totp_factors`: one per user; `confirmed_at` is null until the user
 * proved their authenticator with a code, and only then is a code asked at login. `last_step` is
 * the RFC 6238 time step of the last code accepted: a code of that step or an earlier one is
 * refused, so a code seen over a shoulder cannot be replayed. `recovery_codes`: SHA-256 of each
 * (they are 80 random bits: a slow hash buys nothing), `used_at` set when one is spent.
 *
 * The secret itself is stored as is: a code is computed from it, so it cannot be hashed, and the
 * project has no secret kept outside the database to encrypt it with (the history's key lives in
 * `settings`). A copy of the database therefore gives an attacker codes, but not passwords
 * (scrypt) or sessions (SHA-256): two factors still stop a password guessed or phished alone.
 */
export const secondFactor: Migration = {
  version: 10,
  name: 'TOTP two-factor and recovery codes',
  async up(db, engine) {
    const { time } = types(engine);
    await db.schema.createTable('totp_factors')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('confirmed_at', time)
      .addColumn('last_step', time, (c) => c.notNull())
      .execute();
    await db.schema.createTable('recovery_codes')
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('used_at', time)
      .addPrimaryKeyConstraint('recovery_codes_pk', ['user_id', 'code_hash'])
      .execute();
  },
};
