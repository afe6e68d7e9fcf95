import type { Migration } from './types.js';

/**
 * Two-factor required of one console user (issue 26): an owner's setting, besides the
 * instance-wide TWO_FACTOR_REQUIRED. 1 while set: the user, without a confirmed authenticator, may
 * do nothing but set one up. Numbered 15 as agreed between the branches of this round; versions
 * 12 to 14 belong to other branches, and a migration runs by its version whatever the gaps.
 */
export const twoFactorPerUser: Migration = {
  version: 15,
  name: 'two-factor required per user',
  async up(db) {
    await db.schema.alterTable('users').addColumn('two_factor_required', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
