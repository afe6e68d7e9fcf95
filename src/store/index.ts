import type { Logger } from 'pino';
import type { SourceStatus } from '../evaluation/facts.js';
import { Accounts } from './accounts.js';
import { AdminTokens } from './admin-tokens.js';
import { listAudit, type AuditRecord } from './audit.js';
import type { Engine } from './engine.js';
import { createEvaluationLog, type EvaluationLog } from './evaluation-log.js';
import { StoreHealth } from './health.js';
import { migrate, type MigrationReport } from './migrate.js';
import { openPostgres } from './postgres.js';
import { LoginThrottle } from './login-throttle.js';
import { RuleSets } from './rule-sets.js';
import { Sessions } from './sessions.js';
import { readSnapshot, type ConfigSnapshot } from './snapshot.js';
import { describeSqliteError, openSqlite, SQLITE_SERVING_BUSY_TIMEOUT_MS, type SqliteEngine } from './sqlite.js';
import { StoreError, type DatabaseUrl } from './url.js';
import { Users } from './users.js';

/**
 * The store (PRODUCT.md "Memory: the store"): one object with a port per need. The request path
 * uses only `log.record` and `health.available`; everything else is configuration and tooling,
 * off the request path.
 */
export interface Store {
  readonly engine: Engine;
  readonly accounts: Accounts;
  readonly ruleSets: RuleSets;
  /** Who may use the admin API: console users and their roles, sessions, admin tokens, failed logins. */
  readonly users: Users;
  readonly sessions: Sessions;
  readonly adminTokens: AdminTokens;
  readonly loginThrottle: LoginThrottle;
  readonly log: EvaluationLog;
  readonly health: StoreHealth;
  readonly migration: MigrationReport;
  snapshot(compiled?: ReadonlySet<number>): Promise<ConfigSnapshot>;
  audit(query?: { account?: string; beforeId?: number; limit?: number }): Promise<AuditRecord[]>;
  /** For `/readyz` and the start-up log: engine, where (no password), reachable, the log's counters. */
  status(): SourceStatus & { log: ReturnType<EvaluationLog['stats']> };
  close(): Promise<void>;
}

export interface StoreOptions {
  database: DatabaseUrl;
  logger: Logger;
  /** The service writes the evaluation log; a CLI does not, and opens no writer. */
  retentionDays: number;
  writeLog: boolean;
  now?: () => number;
  /** Bounds of the log's queue (tests). */
  logQueue?: { maxEntries?: number; maxBytes?: number };
}

/**
 * Opens the store named by DATABASE_URL and migrates it. Anything that stops it from working (a
 * file that is not a database or cannot be written, a PostgreSQL that refuses) is a StoreError
 * naming DATABASE_URL: the service does not start on a store it cannot write.
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: 'store' });
  const health = new StoreHealth(logger);
  const database = options.database;
  const engine: Engine =
    database.engine === 'sqlite' ? openSqlite(database) : await openPostgres(database, { onPoolError: (error) => health.down(error) });

  let migration: MigrationReport;
  try {
    migration = await migrate(engine);
    // A write at every start: a file or a role that cannot be written fails here, not on the first change.
    await engine.db.insertInto('settings').values({ name: 'store.started_at', value: new Date(now()).toISOString() })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value: (eb) => eb.ref('excluded.value') })).execute();
  } catch (error) {
    await engine.close().catch(() => undefined);
    if (error instanceof StoreError) throw error;
    const detail = database.engine === 'sqlite' ? describeSqliteError(error, database.path) : (error as Error).message;
    throw new StoreError(database, detail);
  }
  if (migration.applied.length > 0) logger.info({ from: migration.from, to: migration.to, applied: migration.applied }, 'store migrated');
  if (engine.kind === 'sqlite') (engine as SqliteEngine).setBusyTimeout(SQLITE_SERVING_BUSY_TIMEOUT_MS);

  const ruleSets = new RuleSets(engine, now);
  const accounts = new Accounts(engine, ruleSets, now);
  const writer = options.writeLog && options.retentionDays > 0 ? await engine.openLogWriter() : null;
  const log = createEvaluationLog({
    writer,
    retentionDays: options.retentionDays,
    logger,
    available: () => health.available,
    onWriteError: (error) => health.down(error),
    now,
    ...options.logQueue,
  });
  health.onRecovery(() => log.resume());

  return {
    engine,
    accounts,
    ruleSets,
    users: new Users(engine, now),
    sessions: new Sessions(engine),
    adminTokens: new AdminTokens(engine, now),
    loginThrottle: new LoginThrottle(engine),
    log,
    health,
    migration,
    snapshot: (compiled = new Set()) => readSnapshot(engine, compiled),
    audit: (query) => listAudit(engine.db, query),
    status: () => ({
      name: 'store',
      source: database.display,
      type: engine.kind,
      loaded: health.available,
      build_date: null,
      entries: null,
      error: health.available ? null : health.lastError,
      log: log.stats(),
    }),
    async close() {
      await log.close();
      await engine.close();
    },
  };
}

export { StoreError } from './url.js';
export type { ConfigSnapshot } from './snapshot.js';
