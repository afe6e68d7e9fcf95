import { sql, type Transaction } from 'kysely';
import type { Engine } from './engine.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { StoreError } from '../config/store-url.js';

export interface MigrationReport {
  from: number;
  to: number;
  applied: string[];
}

/**
 * Brings the schema to this code's version, under the store's schema lock (replicas starting
 * together migrate one at a time; the second finds nothing left to do). All pending migrations run
 * in one transaction: both engines have transactional DDL, so a failure leaves the schema as it was.
 * A database migrated by a newer version is refused: this code would misread it.
 */
export async function migrate(engine: Engine, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationReport> {
  return engine.lockedTransaction(async (trx) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the bookkeeping table is not part of the app's schema type
    const db = trx as unknown as Transaction<any>;
    await db.schema.createTable('schema_migrations').ifNotExists()
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', engine.kind === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
      .execute();
    const rows: Array<{ version: number; name: string }> = await db.selectFrom('schema_migrations').select(['version', 'name']).orderBy('version').execute();
    const current = rows.at(-1)?.version ?? 0;
    const latest = migrations.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new StoreError(engine.database,
        `the database is at schema version ${current} (${rows.at(-1)!.name}), newer than this version of the service knows (${latest}). ` +
          'Run the newer version, or restore a backup taken before the upgrade (README "Store").');
    }
    const applied: string[] = [];
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      await migration.up(db, engine.kind);
      await db.insertInto('schema_migrations').values({ version: migration.version, name: migration.name, applied_at: Date.now() }).execute();
      applied.push(`${migration.version} ${migration.name}`);
    }
    return { from: current, to: Math.max(current, latest), applied };
  });
}

/** The schema version a store is at (0: never migrated). */
export async function schemaVersion(engine: Engine): Promise<number> {
  const result = await sql<{ version: number | null }>`select max(version) as version from schema_migrations`.execute(engine.db).catch(() => null);
  return result?.rows[0]?.version ?? 0;
}
