import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import { bumpRevision } from './revision.js';
import type { RuleSetShadowRow } from './schema.js';

/**
 * Shadow rule sets (issue 16): a stored version of an event type's rule set evaluated beside the
 * live one on every evaluation, its outcome logged and never answered. At most one per account and
 * event type (the table's key): starting another replaces it. Starting and stopping are audited and
 * bump the store's revision, so every replica runs (or stops running) it within
 * RELOAD_INTERVAL_MS, like a publish. The text is copied when the shadow starts: what runs is the
 * version as it was then, whatever its draft becomes.
 */
export class Shadows {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  async get(account: string, eventType: string): Promise<RuleSetShadowRow | undefined> {
    return this.engine.db.selectFrom('rule_set_shadows').selectAll().where('account_id', '=', account).where('event_type', '=', eventType).executeTakeFirst();
  }

  /** Puts `version` (the draft when undefined) in shadow, replacing the event type's shadow if there is one. */
  async start(account: string, eventType: string, version: number | undefined, by: { actor: string }): Promise<RuleSetShadowRow> {
    return this.engine.db.transaction().execute(async (trx) => {
      if (!(await this.engine.lockAccount(trx, account))) throw new StoreRequestError('not_found', `no account "${account}"`);
      let query = trx.selectFrom('rule_set_versions').select(['id', 'version', 'yaml']).where('account_id', '=', account).where('event_type', '=', eventType);
      query = version === undefined ? query.where('status', '=', 'draft') : query.where('version', '=', version);
      const source = await query.executeTakeFirst();
      if (!source) throw new StoreRequestError('not_found', version === undefined ? `${eventType} has no draft` : `account "${account}" has no version ${version} of ${eventType}`);
      const at = this.now();
      const before = await trx.selectFrom('rule_set_shadows').select('version').where('account_id', '=', account).where('event_type', '=', eventType).executeTakeFirst();
      await trx.deleteFrom('rule_set_shadows').where('account_id', '=', account).where('event_type', '=', eventType).execute();
      const row: RuleSetShadowRow = { account_id: account, event_type: eventType, rule_set_version: source.id, version: source.version, yaml: source.yaml, started_by: by.actor, started_at: at };
      await trx.insertInto('rule_set_shadows').values(row).execute();
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'rule_set.shadow.start', target: eventType, before: before ?? null, after: { version: source.version } });
      await bumpRevision(trx);
      return row;
    });
  }

  /** Stops the event type's shadow; undefined when none ran. */
  async stop(account: string, eventType: string, by: { actor: string }): Promise<RuleSetShadowRow | undefined> {
    return this.engine.db.transaction().execute(async (trx) => {
      if (!(await this.engine.lockAccount(trx, account))) throw new StoreRequestError('not_found', `no account "${account}"`);
      const row = await trx.selectFrom('rule_set_shadows').selectAll().where('account_id', '=', account).where('event_type', '=', eventType).executeTakeFirst();
      if (!row) return undefined;
      await trx.deleteFrom('rule_set_shadows').where('account_id', '=', account).where('event_type', '=', eventType).execute();
      await appendAudit(trx, this.now(), { actor: by.actor, account_id: account, action: 'rule_set.shadow.stop', target: eventType, before: { version: row.version }, after: null });
      await bumpRevision(trx);
      return row;
    });
  }
}
