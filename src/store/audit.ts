import type { Kysely, Transaction } from 'kysely';
import { fromJson, toJson } from './json.js';
import type { Database } from './schema.js';

/**
 * The audit log: every change to accounts, keys and rule sets (later lists and users), written in
 * the transaction of the change itself, so there is no change without its record. Who, when, what,
 * before and after; never a secret (keys appear by id and prefix, never by key or hash).
 */
export interface AuditEntry {
  actor: string;
  account_id: string | null;
  action: string;
  target: string | null;
  before?: unknown;
  after?: unknown;
}

export interface AuditRecord extends Required<AuditEntry> {
  id: number;
  at: number;
}

export async function appendAudit(trx: Transaction<Database>, at: number, entry: AuditEntry): Promise<void> {
  await trx.insertInto('audit_log').values({
    at, actor: entry.actor, account_id: entry.account_id, action: entry.action, target: entry.target,
    before: toJson(entry.before), after: toJson(entry.after),
  }).execute();
}

/** Newest first; `account` narrows to one account's entries, `beforeId` pages. */
export async function listAudit(db: Kysely<Database>, query: { account?: string; beforeId?: number; limit?: number } = {}): Promise<AuditRecord[]> {
  let select = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(Math.min(query.limit ?? 100, 1000));
  if (query.account !== undefined) select = select.where('account_id', '=', query.account);
  if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId);
  const rows = await select.execute();
  return rows.map((r) => ({ ...r, before: fromJson(r.before), after: fromJson(r.after) }));
}
