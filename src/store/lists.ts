import type { Transaction } from 'kysely';
import { normaliseListValue } from '../lists/entry.js';
import { LIST_KINDS, LIST_NAMES, type ListKind, type ListName } from '../lists/facts.js';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import { bumpRevision } from './revision.js';
import type { Database, ListEntryRow } from './schema.js';

/**
 * The port for an account's block and allow lists (PRODUCT.md "Lists"): the CLI (`npm run lists`)
 * and the admin API call it. Every change is audited and bumps the change counter in its own
 * transaction, so every replica serves it from memory within RELOAD_INTERVAL_MS.
 */
export type ListEntry = Omit<ListEntryRow, 'id'> & { id: number };

export interface NewListEntry {
  list: ListName;
  kind: ListKind;
  value: string;
  reason: string;
  /** Milliseconds since the epoch; null: until removed. */
  expires_at?: number | null;
}

export interface ListQuery {
  list?: ListName;
  kind?: ListKind;
  /** Expired entries are kept until pruned; listed only when asked for. */
  includeExpired?: boolean;
  limit?: number;
  /** Entries with a smaller id (pages newest first). */
  beforeId?: number;
}

/** Per account: a list is for decisions people make, not a dump of a feed (which belongs in DATA_DIR). */
export const MAX_LIST_ENTRIES = 100_000;
export const MAX_REASON_LENGTH = 500;

export class Lists {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  async add(account: string, entry: NewListEntry, by: { actor: string }): Promise<ListEntry> {
    return this.engine.db.transaction().execute((trx) => this.addIn(trx, account, entry, by));
  }

  /**
   * `add` inside a caller's transaction (a review resolved with "and block this device": both or
   * neither). Validates first; audits and bumps the change counter in `trx`.
   */
  async addIn(trx: Transaction<Database>, account: string, entry: NewListEntry, by: { actor: string }): Promise<ListEntry> {
    if (!LIST_NAMES.includes(entry.list)) throw new StoreRequestError('invalid', `list must be one of ${LIST_NAMES.join(', ')}`);
    if (!LIST_KINDS.includes(entry.kind)) throw new StoreRequestError('invalid', `kind must be one of ${LIST_KINDS.join(', ')}`);
    const normalised = normaliseListValue(entry.kind, entry.value);
    if ('error' in normalised) throw new StoreRequestError('invalid', `value: ${normalised.error}`);
    const reason = entry.reason.trim();
    if (reason.length === 0 || reason.length > MAX_REASON_LENGTH) throw new StoreRequestError('invalid', `reason: 1 to ${MAX_REASON_LENGTH} characters`);
    const at = this.now();
    const expires = entry.expires_at ?? null;
    if (expires !== null && (!Number.isFinite(expires) || expires <= at)) throw new StoreRequestError('invalid', 'expires_at must be in the future');
    await this.requireAccount(trx, account);
    const { n } = await trx.selectFrom('list_entries').select((eb) => eb.fn.countAll<number | string>().as('n')).where('account_id', '=', account).executeTakeFirstOrThrow();
    if (Number(n) >= MAX_LIST_ENTRIES) throw new StoreRequestError('conflict', `account "${account}" already has ${MAX_LIST_ENTRIES} list entries; remove some first`);
    const existing = await trx.selectFrom('list_entries').select('id').where('account_id', '=', account).where('list', '=', entry.list)
      .where('kind', '=', entry.kind).where('value', '=', normalised.value).executeTakeFirst();
    if (existing) throw new StoreRequestError('conflict', `${entry.kind} ${normalised.value} is already on the ${entry.list} list (entry ${existing.id})`);
    const row = { account_id: account, list: entry.list, kind: entry.kind, value: normalised.value, reason, author: by.actor, created_at: at, expires_at: expires };
    const { id } = await trx.insertInto('list_entries').values(row).returning('id').executeTakeFirstOrThrow();
    const added = { id: Number(id), ...row };
    await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'list.add', target: `${entry.list}:${id}`, before: null, after: added });
    await bumpRevision(trx);
    return added;
  }

  async remove(account: string, id: number, by: { actor: string }): Promise<ListEntry> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const entry = await trx.selectFrom('list_entries').selectAll().where('account_id', '=', account).where('id', '=', id).executeTakeFirst();
      if (!entry) throw new StoreRequestError('not_found', `account "${account}" has no list entry ${id}`);
      await trx.deleteFrom('list_entries').where('id', '=', id).execute();
      const removed = { ...entry, id: Number(entry.id) };
      await appendAudit(trx, this.now(), { actor: by.actor, account_id: account, action: 'list.remove', target: `${entry.list}:${id}`, before: removed, after: null });
      await bumpRevision(trx);
      return removed;
    });
  }

  /** Newest first. */
  async list(account: string, query: ListQuery = {}): Promise<ListEntry[]> {
    let select = this.engine.db.selectFrom('list_entries').selectAll().where('account_id', '=', account)
      .orderBy('id', 'desc').limit(Math.min(query.limit ?? 1000, MAX_LIST_ENTRIES));
    if (query.list !== undefined) select = select.where('list', '=', query.list);
    if (query.kind !== undefined) select = select.where('kind', '=', query.kind);
    if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId);
    if (!query.includeExpired) select = select.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', this.now())]));
    return (await select.execute()).map((row) => ({ ...row, id: Number(row.id) }));
  }

  private async requireAccount(trx: Transaction<Database>, account: string): Promise<void> {
    if (!(await this.engine.lockAccount(trx, account))) throw new StoreRequestError('not_found', `no account "${account}"`);
  }
}
