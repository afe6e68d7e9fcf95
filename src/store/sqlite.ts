import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Sqlite from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig } from 'kysely';
import type { Engine } from './engine.js';
import type { Database } from './schema.js';
import { sqliteHistory } from './history-sqlite.js';
import { openSqliteWriterThread, sqliteLogWriter } from './sqlite-log-writer.js';
import { StoreError, type DatabaseUrl } from '../config/store-url.js';

/**
 * SQLite through better-sqlite3: WAL (readers never wait for the writer), `synchronous=NORMAL`
 * (durable at each checkpoint, the WAL-mode setting SQLite recommends), foreign keys on.
 *
 * better-sqlite3 is synchronous: a statement that waits for another process's lock waits on the
 * event loop. So the evaluation log, the one steady writer, writes from its own thread and
 * connection (sqlite-log-writer.ts), and this connection, used for configuration changes, waits at
 * most `busyTimeoutMs` for the lock.
 */
export const SQLITE_START_BUSY_TIMEOUT_MS = 5_000;
export const SQLITE_SERVING_BUSY_TIMEOUT_MS = 250;

/** Every transaction takes the write lock at BEGIN: one that read first and wrote later could find its snapshot stale. */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.config);
  }
}

export interface SqliteEngine extends Engine {
  /** How long this connection waits for another's write lock; long at start-up, short once serving. */
  setBusyTimeout(ms: number): void;
}

export function openSqlite(database: DatabaseUrl & { engine: 'sqlite' }): SqliteEngine {
  const fail = (error: unknown): never => {
    throw new StoreError(database, describeSqliteError(error, database.path));
  };
  try {
    mkdirSync(dirname(database.path), { recursive: true });
  } catch (error) {
    throw new StoreError(database, `cannot create the directory ${dirname(database.path)} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let sqlite: Sqlite.Database;
  try {
    sqlite = new Sqlite(database.path, { timeout: SQLITE_START_BUSY_TIMEOUT_MS });
  } catch (error) {
    return fail(error);
  }
  try {
    // Reading the schema is the first thing that notices a file that is not a database.
    sqlite.prepare('select count(*) from sqlite_schema').get();
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    sqlite.close();
    fail(error);
  }
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }) });

  return {
    kind: 'sqlite',
    database,
    db,
    lockedTransaction: (fn) => db.transaction().execute(fn),
    lockAccount: (trx, id) => trx.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst(),
    // Through Kysely, not a statement of our own: its mutex keeps this read out of an open transaction.
    revision: async () => (await db.selectFrom('store_revision').select('revision').where('id', '=', 1).executeTakeFirstOrThrow()).revision,
    async openWriters(needs) {
      const users = (needs.log ? 1 : 0) + (needs.history ? 1 : 0);
      if (users === 0) return { log: null, history: null };
      const thread = await openSqliteWriterThread(database, users);
      return {
        log: needs.log ? sqliteLogWriter(thread) : null,
        history: needs.history ? sqliteHistory({ ...needs.history, path: database.path, thread }) : null,
      };
    },
    setBusyTimeout(ms) {
      sqlite.pragma(`busy_timeout = ${Math.floor(ms)}`);
    },
    async close() {
      await db.destroy();
    },
  };
}

/** What an operator can act on, for the codes SQLite and the file system give. */
export function describeSqliteError(error: unknown, path: string): string {
  const code = (error as { code?: string }).code ?? '';
  const message = (error as Error).message;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return `${path} is not a SQLite database or is corrupt (${message}); restore it from a backup (README "Store")`;
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code === 'EACCES' || code === 'EROFS' || code === 'EPERM') {
    return `${path} cannot be opened for writing (${message}); the service needs to write the file and its directory`;
  }
  return `${path}: ${message}`;
}
