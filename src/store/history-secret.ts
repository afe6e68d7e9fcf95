import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { SECRET_BYTES } from '../history/identifiers.js';
import type { Database } from './schema.js';

const NAME = 'history.hmac_secret';

/**
 * The key of the history's identifier hashes: made at the first start that needs it and kept in
 * `settings`; replicas starting together agree on the one that was inserted first. It is in every
 * backup of the store, with the history it keys: restore them together.
 */
export async function historySecret(db: Kysely<Database>): Promise<Buffer> {
  await db.insertInto('settings').values({ name: NAME, value: randomBytes(SECRET_BYTES).toString('base64') })
    .onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('settings').select('value').where('name', '=', NAME).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}
