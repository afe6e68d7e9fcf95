import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/index.js';
import { StoreRequestError } from '../store/errors.js';
import type { UserInfo } from '../store/users.js';

/**
 * The first owner of a development install: while no console user exists, a start outside
 * production makes a one-time setup token, kept in the store as a SHA-256 hash, and the server
 * prints a link with it to the terminal (never to the log). `POST /admin/v1/setup` with the token
 * creates the first owner and consumes it; a later start makes a new one (the old stops working)
 * until someone has used one. Production uses `npm run admin -- create` instead.
 */
const SETTING = 'admin.setup_token';
export const SETUP_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

interface Stored {
  hash: string;
  expires_at: number;
}

const digest = (token: string) => hash('sha256', token, 'hex');

/** A new setup token when the store has no console user; undefined otherwise. */
export async function createSetupToken(store: Store, now: number): Promise<string | undefined> {
  if ((await store.users.count()) > 0) return undefined;
  const token = randomBytes(32).toString('base64url');
  const value = JSON.stringify({ hash: digest(token), expires_at: now + SETUP_TOKEN_LIFETIME_MS } satisfies Stored);
  await store.engine.db.insertInto('settings').values({ name: SETTING, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value })).execute();
  return token;
}

/**
 * Creates the first owner if `token` is the live setup token and no user exists yet, consuming the
 * token in the same transaction (two requests racing with it: one wins). Refused with `not_found`
 * otherwise, without saying which condition failed.
 */
export async function useSetupToken(store: Store, token: string, owner: { email: string; hashPassword: () => Promise<string> }, now: number): Promise<UserInfo> {
  const refused = () => new StoreRequestError('not_found', 'no such setup token: it was used, replaced by a later start, or has expired; use "npm run admin -- create"');
  const row = await store.engine.db.selectFrom('settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  if (!row) throw refused();
  const stored = JSON.parse(row.value) as Stored;
  const [given, expected] = [Buffer.from(digest(token)), Buffer.from(stored.hash)];
  if (stored.expires_at <= now || given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
  // Only now, with the token proven: a password hash costs a core for a fifth of a second, and a
  // stranger's request (in production there is never a token) must not be able to buy one.
  const passwordHash = await owner.hashPassword();
  return store.engine.db.transaction().execute(async (trx) => {
    const consumed = await trx.deleteFrom('settings').where('name', '=', SETTING).where('value', '=', row.value).returning('name').executeTakeFirst();
    if (!consumed) throw refused();
    const users = await trx.selectFrom('users').select('id').limit(1).execute();
    if (users.length > 0) throw refused();
    return store.users.createIn(trx, { email: owner.email, passwordHash, owner: true, passwordChangeRequired: false }, 'setup');
  });
}
