import type { Transaction } from 'kysely';
import type { Database } from './schema.js';

/** Every replica polls the counter; a change to what they serve bumps it in its own transaction. */
export async function bumpRevision(trx: Transaction<Database>): Promise<void> {
  await trx.updateTable('store_revision').set((eb) => ({ revision: eb('revision', '+', 1) })).where('id', '=', 1).execute();
}
