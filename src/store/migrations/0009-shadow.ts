import { types, type Migration } from './types.js';

/**
 * Shadow rule sets (issue 16). `rule_set_shadows`: at most one per account and event type (its
 * key), the rule file as it was when the shadow started (a draft edited since does not change what
 * runs: start the shadow again for that), read by every replica with the published versions.
 * `evaluations.shadow`: the shadow's outcome beside the live one (version, score, state, rules that
 * fired); null when no shadow ran, as for every evaluation logged before this migration.
 */
export const shadowRuleSets: Migration = {
  version: 9,
  name: 'shadow rule sets',
  async up(db, engine) {
    const { time, document } = types(engine);
    await db.schema.createTable('rule_set_shadows')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('rule_set_version', 'integer', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('yaml', 'text', (c) => c.notNull())
      .addColumn('started_by', 'text', (c) => c.notNull())
      .addColumn('started_at', time, (c) => c.notNull())
      .addPrimaryKeyConstraint('rule_set_shadows_pk', ['account_id', 'event_type'])
      .execute();
    await db.schema.alterTable('evaluations').addColumn('shadow', document).execute();
  },
};
