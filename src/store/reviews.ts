import type { Transaction } from 'kysely';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import type { ListEntry, Lists, NewListEntry } from './lists.js';
import type { Database, ReviewItemRow, ReviewResolution, ReviewStatus } from './schema.js';
import type { WebhookQueue } from './webhook-queue.js';

/**
 * The review queue (PRODUCT.md "Review"): the items the log writer opened for evaluations answered
 * `review`, worked through by analysts in the console or resolved by the caller's backend through
 * the admin API. Every change is one conditional UPDATE of the item's row, checked by its row
 * count, so two people racing for one item cannot both win on either engine (PostgreSQL re-reads
 * the condition after the first writer's lock; SQLite writes one at a time): the loser is told who
 * won. Claims, releases and resolutions are audited in their transaction; a resolution labels the
 * evaluation (`decline` → `fraud`, `approve` → `legit`), adds its list entries and queues its
 * `review.resolved` webhook deliveries in the same one.
 */
export const REVIEW_STATUSES = ['open', 'claimed', 'resolved'] as const;
export const REVIEW_RESOLUTIONS = ['approve', 'decline'] as const;
export const MAX_REVIEW_REASON = 1_000;
/** List entries one resolution may add ("decline and block this device, this IP and this e-mail"). */
export const MAX_RESOLUTION_ENTRIES = 5;
export const MAX_REVIEW_PAGE = 200;

export type ReviewItem = ReviewItemRow;

export interface ReviewQuery {
  /** `unresolved` (the default): open and claimed. */
  status?: ReviewStatus | 'unresolved';
  eventType?: string;
  /** A rule that fired (live or dry-run) in the evaluation. */
  rule?: string;
  assignee?: string;
  /** Items after this evaluation id (pages oldest first). */
  afterId?: string;
  limit: number;
}

export interface Resolution {
  resolution: ReviewResolution;
  reason: string;
  /** Added with the resolution's reason, in its transaction. */
  entries?: Array<Omit<NewListEntry, 'reason'>>;
}

const LABEL_OF: Record<ReviewResolution, 'fraud' | 'legit'> = { decline: 'fraud', approve: 'legit' };

export class Reviews {
  constructor(
    private readonly engine: Engine,
    private readonly lists: Lists,
    private readonly webhooks: WebhookQueue,
    private readonly now: () => number,
  ) {}

  /** Oldest first: the queue is worked from the item that has waited longest. */
  async list(account: string, query: ReviewQuery): Promise<ReviewItem[]> {
    let select = this.engine.db.selectFrom('review_items as r').selectAll('r').where('r.account_id', '=', account)
      .orderBy('r.evaluation_id').limit(Math.min(query.limit, MAX_REVIEW_PAGE + 1));
    const status = query.status ?? 'unresolved';
    select = status === 'unresolved' ? select.where('r.status', 'in', ['open', 'claimed']) : select.where('r.status', '=', status);
    if (query.eventType !== undefined) select = select.where('r.event_type', '=', query.eventType);
    if (query.assignee !== undefined) select = select.where('r.assignee', '=', query.assignee);
    if (query.afterId !== undefined) select = select.where('r.evaluation_id', '>', query.afterId);
    if (query.rule !== undefined) {
      const rule = query.rule;
      select = select.where(({ exists, selectFrom }) => exists(selectFrom('evaluation_rules as f').select('f.rule_id')
        .whereRef('f.account_id', '=', 'r.account_id').whereRef('f.evaluation_id', '=', 'r.evaluation_id').where('f.rule_id', '=', rule)));
    }
    return (await select.execute()).map(numbers);
  }

  /** Items per status, for the console's navigation. */
  async counts(account: string): Promise<Record<ReviewStatus, number>> {
    const rows = await this.engine.db.selectFrom('review_items').select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('account_id', '=', account).groupBy('status').execute();
    const counts: Record<ReviewStatus, number> = { open: 0, claimed: 0, resolved: 0 };
    for (const row of rows) counts[row.status] = Number(row.n);
    return counts;
  }

  async get(account: string, evaluationId: string): Promise<ReviewItem | undefined> {
    const row = await this.engine.db.selectFrom('review_items').selectAll().where('account_id', '=', account).where('evaluation_id', '=', evaluationId).executeTakeFirst();
    return row && numbers(row);
  }

  /** Takes an open item (claiming one's own claim again is no change); `conflict` when someone else holds it or it is resolved. */
  async claim(account: string, evaluationId: string, by: { actor: string }): Promise<ReviewItem> {
    return this.engine.db.transaction().execute(async (trx) => {
      const at = this.now();
      const changed = await trx.updateTable('review_items').set({ status: 'claimed', assignee: by.actor, claimed_at: at })
        .where('account_id', '=', account).where('evaluation_id', '=', evaluationId).where('status', '=', 'open').executeTakeFirst();
      const item = await this.current(trx, account, evaluationId);
      if (Number(changed.numUpdatedRows) === 0) {
        if (item.status === 'claimed' && item.assignee === by.actor) return item;
        throw refused(item);
      }
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'review.claim', target: evaluationId, before: null, after: { assignee: by.actor } });
      return item;
    });
  }

  /** Puts a claimed item back in the queue (anyone of the account may: a colleague frees a forgotten claim; audited); `conflict` unless claimed. */
  async release(account: string, evaluationId: string, by: { actor: string }): Promise<ReviewItem> {
    return this.engine.db.transaction().execute(async (trx) => {
      const before = await this.current(trx, account, evaluationId);
      const changed = await trx.updateTable('review_items').set({ status: 'open', assignee: null, claimed_at: null })
        .where('account_id', '=', account).where('evaluation_id', '=', evaluationId).where('status', '=', 'claimed').executeTakeFirst();
      if (Number(changed.numUpdatedRows) === 0) {
        const item = await this.current(trx, account, evaluationId);
        if (item.status === 'open') throw new StoreRequestError('conflict', `review item ${evaluationId} is not claimed`);
        throw refused(item);
      }
      await appendAudit(trx, this.now(), { actor: by.actor, account_id: account, action: 'review.release', target: evaluationId, before: { assignee: before.assignee }, after: null });
      return this.current(trx, account, evaluationId);
    });
  }

  /**
   * Resolves an open item, or one claimed by `by`: labels the evaluation and adds the list entries,
   * all or nothing. `conflict` when it is resolved already or claimed by someone else.
   */
  async resolve(account: string, evaluationId: string, resolution: Resolution, by: { actor: string }): Promise<{ item: ReviewItem; entries: ListEntry[] }> {
    const reason = resolution.reason.trim();
    if (reason.length === 0 || reason.length > MAX_REVIEW_REASON) throw new StoreRequestError('invalid', `reason: 1 to ${MAX_REVIEW_REASON} characters`);
    if ((resolution.entries?.length ?? 0) > MAX_RESOLUTION_ENTRIES) throw new StoreRequestError('invalid', `entries: at most ${MAX_RESOLUTION_ENTRIES}`);
    return this.engine.db.transaction().execute(async (trx) => {
      const at = this.now();
      const changed = await trx.updateTable('review_items')
        .set({ status: 'resolved', assignee: by.actor, resolution: resolution.resolution, reason, resolved_by: by.actor, resolved_at: at })
        .where('account_id', '=', account).where('evaluation_id', '=', evaluationId)
        .where((eb) => eb.or([eb('status', '=', 'open'), eb.and([eb('status', '=', 'claimed'), eb('assignee', '=', by.actor)])]))
        .executeTakeFirst();
      const item = await this.current(trx, account, evaluationId);
      if (Number(changed.numUpdatedRows) === 0) throw refused(item);
      const label = { account_id: account, evaluation_id: evaluationId, label: LABEL_OF[resolution.resolution], reason, author: by.actor, created_at: at };
      await trx.insertInto('labels').values(label)
        .onConflict((oc) => oc.columns(['account_id', 'evaluation_id']).doUpdateSet({ label: label.label, reason, author: by.actor, created_at: at })).execute();
      const entries: ListEntry[] = [];
      for (const entry of resolution.entries ?? []) entries.push(await this.lists.addIn(trx, account, { ...entry, reason }, by));
      await appendAudit(trx, at, {
        actor: by.actor, account_id: account, action: 'review.resolve', target: evaluationId, before: null,
        after: { resolution: resolution.resolution, reason, label: label.label, list_entries: entries.map((e) => e.id) },
      });
      await this.announce(trx, item);
      return { item, entries };
    });
  }

  /** Queues `review.resolved` for each endpoint of the account that takes it, in the resolution's transaction: never lost. */
  private async announce(trx: Transaction<Database>, item: ReviewItem): Promise<void> {
    const endpoints = await trx.selectFrom('webhook_endpoints').select(['id', 'events']).where('account_id', '=', item.account_id).where('enabled', '=', 1).execute();
    const payload = JSON.stringify({
      type: 'review.resolved',
      timestamp: new Date(item.resolved_at!).toISOString(),
      data: { evaluation_id: item.evaluation_id, event_type: item.event_type, user_id: item.user_id, resolution: item.resolution, reason: item.reason, resolved_at: new Date(item.resolved_at!).toISOString() },
    });
    for (const endpoint of endpoints) {
      if (!endpoint.events.split(',').includes('review.resolved')) continue;
      await this.webhooks.enqueue(trx, { account: item.account_id, endpointId: endpoint.id, type: 'review.resolved', payload, at: item.resolved_at! });
    }
  }

  private async current(trx: Transaction<Database>, account: string, evaluationId: string): Promise<ReviewItem> {
    const row = await trx.selectFrom('review_items').selectAll().where('account_id', '=', account).where('evaluation_id', '=', evaluationId).executeTakeFirst();
    if (!row) throw new StoreRequestError('not_found', `no review item for evaluation ${evaluationId}`);
    return numbers(row);
  }
}

/** Why a change to `item` was refused, naming who holds or resolved it (the console shows it as is). */
function refused(item: ReviewItem): StoreRequestError {
  if (item.status === 'resolved') {
    return new StoreRequestError('conflict', `review item ${item.evaluation_id} was already resolved (${item.resolution}) by ${item.resolved_by} at ${new Date(item.resolved_at!).toISOString()}`);
  }
  return new StoreRequestError('conflict', `review item ${item.evaluation_id} is claimed by ${item.assignee}; it must be released first`);
}

/** PostgreSQL's bigint columns arrive as strings. */
function numbers(row: ReviewItemRow): ReviewItem {
  const n = (v: number | null) => (v === null ? null : Number(v));
  return { ...row, opened_at: Number(row.opened_at), claimed_at: n(row.claimed_at), resolved_at: n(row.resolved_at) };
}
