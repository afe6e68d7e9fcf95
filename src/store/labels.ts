import type { Transaction } from 'kysely';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import type { Database, Label, LabelRow } from './schema.js';

/**
 * Labels: what an account learned later about an evaluation (PRODUCT.md "feedback"), one per
 * evaluation, the latest wins. The port for the feedback route and, later, the admin API and the
 * console. A label goes when its evaluation goes (pruned with the log, erased with the person).
 * A label set or removed by a person (the admin API: `audit: true`) is audited in the same
 * transaction; a backend's feedback through `/v1` is the evaluation's data, not a change to audit.
 */
export const LABELS = ['fraud', 'legit'] as const;
export const MAX_LABEL_REASON = 1_000;

export class Labels {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  /** Labels an evaluation of the account; `not_found` when the account has no such evaluation in the log. */
  async set(account: string, evaluationId: string, label: Label, reason: string | null, by: { actor: string; audit?: boolean }): Promise<LabelRow> {
    return this.engine.db.transaction().execute(async (trx) => {
      const evaluation = await trx.selectFrom('evaluations').select('id').where('account_id', '=', account).where('id', '=', evaluationId).executeTakeFirst();
      if (!evaluation) throw new StoreRequestError('not_found', `no evaluation ${evaluationId}`);
      const before = by.audit ? await this.current(trx, account, evaluationId) : undefined;
      const row: LabelRow = { account_id: account, evaluation_id: evaluationId, label, reason, author: by.actor, created_at: this.now() };
      await trx.insertInto('labels').values(row)
        .onConflict((oc) => oc.columns(['account_id', 'evaluation_id']).doUpdateSet({ label, reason, author: by.actor, created_at: row.created_at })).execute();
      if (by.audit) await appendAudit(trx, row.created_at, { actor: by.actor, account_id: account, action: 'label.set', target: evaluationId, before: before ?? null, after: row });
      return row;
    });
  }

  /** Removes an evaluation's label, audited; `not_found` when it has none. */
  async remove(account: string, evaluationId: string, by: { actor: string }): Promise<LabelRow> {
    return this.engine.db.transaction().execute(async (trx) => {
      const before = await this.current(trx, account, evaluationId);
      if (!before) throw new StoreRequestError('not_found', `evaluation ${evaluationId} has no label`);
      await trx.deleteFrom('labels').where('account_id', '=', account).where('evaluation_id', '=', evaluationId).execute();
      await appendAudit(trx, this.now(), { actor: by.actor, account_id: account, action: 'label.remove', target: evaluationId, before, after: null });
      return before;
    });
  }

  private async current(trx: Transaction<Database>, account: string, evaluationId: string): Promise<LabelRow | undefined> {
    const row = await trx.selectFrom('labels').selectAll().where('account_id', '=', account).where('evaluation_id', '=', evaluationId).executeTakeFirst();
    return row && { ...row, created_at: Number(row.created_at) };
  }

  async get(account: string, evaluationId: string): Promise<LabelRow | undefined> {
    return this.engine.db.selectFrom('labels').selectAll().where('account_id', '=', account).where('evaluation_id', '=', evaluationId).executeTakeFirst();
  }

  /** An account's labels, newest first (for backtests and the console). */
  async list(account: string, query: { limit?: number; label?: Label } = {}): Promise<LabelRow[]> {
    let select = this.engine.db.selectFrom('labels').selectAll().where('account_id', '=', account).orderBy('created_at', 'desc').limit(Math.min(query.limit ?? 100, 1000));
    if (query.label !== undefined) select = select.where('label', '=', query.label);
    return select.execute();
  }
}

export { StoreRequestError };
