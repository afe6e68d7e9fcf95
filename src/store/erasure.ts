import { sql } from 'kysely';
import { parseEmail } from '../email/address.js';
import { canonicalAddress } from '../email/canonical.js';
import type { Hasher } from '../history/identifiers.js';
import type { LocalCounts } from '../history/local-counts.js';
import { NO_ERASURE, type ErasedHistory, type HistoryStore } from '../history/store.js';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import type { EvaluationLog } from './evaluation-log.js';
import { ERASE_STATEMENTS, ERASE_STEPS } from './history-sql.js';
import { erasePackedFile } from './history-packed.js';
import { SQLITE_SERVING_BUSY_TIMEOUT_MS } from './sqlite.js';
import { StoreRequestError } from './errors.js';

/**
 * Erasure (GDPR Art. 17, PRODUCT.md "erase"): a person's history (their identifiers' rows, counters
 * and sets, and their place among the accounts of IPs and devices), their evaluations in the log
 * and those evaluations' labels. Lists are the account's own decisions and stay.
 *
 * Every replica's view: on SQLite the one process's memory is purged with the file; on PostgreSQL
 * no replica keeps history in memory, but another replica may still have this person's evaluation
 * queued for the log (up to a batch, some 50 ms) or a history statement in flight, so the deletes
 * run again ERASE_AGAIN_MS later.
 */
export interface ErasureSubject {
  userId?: string;
  email?: string;
}

export interface ErasureResult {
  history: ErasedHistory;
  evaluations: number;
  labels: number;
}

export const ERASE_AGAIN_MS = 5_000;

export interface ErasureDependencies {
  engine: Engine;
  log: EvaluationLog;
  history: HistoryStore | null;
  hash: Hasher;
  now: () => number;
  /** This replica's own event counts (src/history/local-counts.ts): the person's e-mail is forgotten there too. */
  local?: LocalCounts;
}

export async function erasePerson(deps: ErasureDependencies, account: string, subject: ErasureSubject, by: { actor: string }): Promise<ErasureResult> {
  const keys: Buffer[] = [];
  let email: string | null = null;
  if (subject.userId !== undefined) keys.push(deps.hash(account, 'user', subject.userId));
  if (subject.email !== undefined) {
    const parsed = parseEmail(subject.email);
    if ('error' in parsed) throw new StoreRequestError('invalid', `email: ${parsed.error}`);
    email = parsed.normalized.toLowerCase();
    keys.push(deps.hash(account, 'email', canonicalAddress(parsed)));
  }
  if (keys.length === 0) throw new StoreRequestError('invalid', 'give user_id, email or both');

  const once = async (): Promise<ErasureResult> => {
    const history = deps.history !== null ? await deps.history.erase(account, keys) : await eraseHistoryRows(deps.engine, account, keys);
    const log = await deps.log.erase(account, subject.userId ?? null, email) ?? (await eraseLogRows(deps.engine, account, subject.userId ?? null, email));
    return { history, ...log };
  };
  const result = await once();
  // Other replicas' local counts of the e-mail age out within 24 hours (README "Behaviour history").
  deps.local?.forget(keys);
  await deps.engine.db.transaction().execute((trx) => appendAudit(trx, deps.now(), {
    // Who and what was removed, never whom: the audit log outlives the erasure.
    actor: by.actor, account_id: account, action: 'person.erase', target: null, before: null,
    after: { by: [subject.userId !== undefined ? 'user_id' : null, email !== null ? 'email' : null].filter(Boolean), removed: result },
  }));
  if (deps.engine.kind === 'postgres') {
    setTimeout(() => void once().catch(() => undefined), ERASE_AGAIN_MS).unref();
  }
  return result;
}

/**
 * When history is off now (HISTORY_DAYS=0), what an earlier setting kept is still erased as the
 * history store erases it: on SQLite the writer thread's JS (history-packed.ts), on PostgreSQL its
 * statements (history-sql.ts) in one transaction.
 */
async function eraseHistoryRows(engine: Engine, account: string, keys: Buffer[]): Promise<ErasedHistory> {
  if (engine.database.engine === 'sqlite') return erasePackedFile(engine.database.path, SQLITE_SERVING_BUSY_TIMEOUT_MS, account, keys);
  const erased = { ...NO_ERASURE };
  await engine.db.transaction().execute(async (trx) => {
    for (const key of keys) {
      for (const step of ERASE_STEPS) {
        erased[step.counts] += Number((await bound(ERASE_STATEMENTS[step.statement], step.values(account, key)).execute(trx)).numAffectedRows ?? 0);
      }
    }
  });
  return erased;
}

/** A statement written with `?` placeholders, its values bound as Kysely binds them on either engine. */
function bound(text: string, values: unknown[]) {
  const parts = text.split('?');
  return sql.join(parts.flatMap((part, i) => (i === 0 ? [sql.raw(part)] : [sql`${values[i - 1]}`, sql.raw(part)])), sql``);
}

/**
 * When the log keeps nothing now (RETENTION_DAYS=0), what it kept before is still erased: the
 * person's evaluations, their labels and review items, as the log's writers erase them. The ids come
 * from the user and e-mail indexes, one range each: `user_id = ? or email = ?` would read every row
 * of the account on SQLite.
 */
async function eraseLogRows(engine: Engine, account: string, userId: string | null, email: string | null) {
  return engine.db.transaction().execute(async (trx) => {
    const by = (column: 'user_id' | 'email', value: string) => trx.selectFrom('evaluations').select('id').where('account_id', '=', account).where(column, '=', value);
    const [first, second] = [...(userId !== null ? [by('user_id', userId)] : []), ...(email !== null ? [by('email', email)] : [])];
    if (first === undefined) return { evaluations: 0, labels: 0 };
    const ids = second === undefined ? first : first.unionAll(second);
    await trx.deleteFrom('review_items').where('account_id', '=', account).where('evaluation_id', 'in', ids).execute();
    const labels = await trx.deleteFrom('labels').where('account_id', '=', account).where('evaluation_id', 'in', ids).executeTakeFirstOrThrow();
    const evaluations = await trx.deleteFrom('evaluations').where('account_id', '=', account).where('id', 'in', ids).executeTakeFirstOrThrow();
    return { evaluations: Number(evaluations.numDeletedRows), labels: Number(labels.numDeletedRows) };
  });
}
