import type { Logger } from 'pino';
import type { SourceStatus } from '../core/ports.js';
import { keyedHasher, type Hasher } from '../history/identifiers.js';
import { createLocalCounts, type LocalCounts } from '../history/local-counts.js';
import type { HistoryStore } from '../history/store.js';
import { Accounts } from './accounts.js';
import { AdminTokens } from './admin-tokens.js';
import { listAudit, type AuditRecord } from './audit.js';
import type { Engine } from './engine.js';
import { Decisions } from './decisions.js';
import { Entities } from './entities.js';
import { createEvaluationLog, type EvaluationLog } from './evaluation-log.js';
import { StoreHealth } from './health.js';
import { Labels } from './labels.js';
import { Lists } from './lists.js';
import { erasePerson, type ErasureResult, type ErasureSubject } from './erasure.js';
import { historyLossReport } from './history-losses.js';
import { historySecret } from './history-secret.js';
import { migrate, type MigrationReport } from './migrate.js';
import type { StoreObserver } from './observer.js';
import { openPostgres } from './postgres.js';
import { LoginThrottle } from './login-throttle.js';
import { Reviews } from './reviews.js';
import { RuleHits } from './rule-hits.js';
import { RuleSets } from './rule-sets.js';
import { SecondFactors } from './second-factors.js';
import { Sessions } from './sessions.js';
import { Shadows } from './shadows.js';
import { readSnapshot, type ConfigSnapshot } from './snapshot.js';
import { describeSqliteError, openSqlite, SQLITE_SERVING_BUSY_TIMEOUT_MS, type SqliteEngine } from './sqlite.js';
import { StoreError, type DatabaseUrl } from '../config/store-url.js';
import { Users } from './users.js';
import { WebhookEndpoints } from './webhook-endpoints.js';
import { WebhookQueue } from './webhook-queue.js';
import { SecretBox } from './webhook-secret-box.js';

/**
 * The store (PRODUCT.md "Memory: the store"): one object with a port per need. The request path
 * uses only `log.record` and `health.available`; everything else is configuration and tooling,
 * off the request path.
 */
export interface Store {
  readonly engine: Engine;
  readonly accounts: Accounts;
  readonly ruleSets: RuleSets;
  /** The rule set each event type runs in shadow (issue 16). */
  readonly shadows: Shadows;
  readonly lists: Lists;
  readonly labels: Labels;
  /** The review queue: items of evaluations answered `review` (issue 27). */
  readonly reviews: Reviews;
  /** Webhook deliveries queued, claimed with a lease (issue 27). */
  readonly webhookQueue: WebhookQueue;
  readonly webhookEndpoints: WebhookEndpoints;
  /** The evaluation log read back: search and one decision (the admin API). */
  readonly decisions: Decisions;
  /** An e-mail address, domain, IP, device or user as the log knows it (issue 27). */
  readonly entities: Entities;
  /** Each rule's fired and unknown counts per hour, for hit rates (issue 28). */
  readonly ruleHits: RuleHits;
  /** Who may use the admin API: console users and their roles, sessions, admin tokens, failed logins. */
  readonly users: Users;
  readonly sessions: Sessions;
  /** TOTP authenticators and recovery codes of console users. */
  readonly secondFactors: SecondFactors;
  readonly adminTokens: AdminTokens;
  readonly loginThrottle: LoginThrottle;
  readonly log: EvaluationLog;
  /** Behaviour history; null when HISTORY_DAYS is 0 or the store was opened by a CLI. */
  readonly history: HistoryStore | null;
  /** Keys history identifiers with the store's secret (src/history/identifiers.ts). */
  readonly hashIdentifier: Hasher;
  /** This replica's own event counts, for answers the history store cannot give (src/history/local-counts.ts); erasure forgets a person's there too. */
  readonly localCounts: LocalCounts;
  readonly health: StoreHealth;
  readonly migration: MigrationReport;
  snapshot(compiled?: ReadonlySet<number>): Promise<ConfigSnapshot>;
  /** Removes a person's history, evaluations and labels (src/store/erasure.ts); the port the API calls. */
  erase(account: string, subject: ErasureSubject, by: { actor: string }): Promise<ErasureResult>;
  audit(query?: { account?: string; beforeId?: number; limit?: number }): Promise<AuditRecord[]>;
  /** For `/readyz` and the start-up log: engine, where (no password), reachable, the log's counters. */
  status(): SourceStatus & { log: ReturnType<EvaluationLog['stats']>; history: ReturnType<HistoryStore['stats']> | null };
  close(): Promise<void>;
}

export interface StoreOptions {
  database: DatabaseUrl;
  logger: Logger;
  /** The service writes the evaluation log; a CLI does not, and opens no writer. */
  retentionDays: number;
  writeLog: boolean;
  /** Days behaviour history is kept; 0 (the default for a CLI) keeps none. */
  historyDays?: number;
  /** How long an evaluation waits for its history step (HISTORY_TIMEOUT_MS; 200 ms unless given). */
  historyTimeoutMs?: number;
  now?: () => number;
  /** Durations and outcomes of the log's batches and prunes (metrics). */
  observe?: StoreObserver;
  /** Bounds of the log's queue (tests). */
  logQueue?: { maxEntries?: number; maxBytes?: number };
  /** Rows a history prune deletes per statement (tests; 1,000 unless given). */
  historyPruneBatch?: number;
  /** WEBHOOK_SECRET_KEY: webhook signing secrets are sealed under it at rest (src/store/webhook-secret-box.ts). */
  webhookSecretKey?: string;
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
  const historyDays = options.historyDays ?? 0;
  const hashIdentifier = keyedHasher(await historySecret(engine.db));
  const localCounts = createLocalCounts();
  const writers = await engine.openWriters({
    log: options.writeLog && options.retentionDays > 0,
    history: options.writeLog && historyDays > 0 ? { historyDays, now, pruneBatch: options.historyPruneBatch, onWriteError: (error) => health.down(error), stepTimeoutMs: options.historyTimeoutMs ?? 200 } : null,
  });
  const history = writers.history;
  const log = createEvaluationLog({
    writer: writers.log,
    retentionDays: options.retentionDays,
    logger,
    available: () => health.available,
    onWriteError: (error) => health.down(error),
    observe: options.observe,
    now,
    ...options.logQueue,
  });
  health.onRecovery(() => log.resume());
  // History is pruned like the log: every minute, in small batches, off the request path. What it
  // lost in that minute, if anything, is said then too.
  const reportLosses = history === null ? undefined : historyLossReport(() => history.stats(), logger);
  const historyPrune = history === null ? undefined : setInterval(() => {
    reportLosses!();
    if (health.available) history.prune().catch((error: Error) => logger.warn({ error: error.message }, 'history not pruned; trying again in a minute'));
  }, 60_000);
  historyPrune?.unref();

  const lists = new Lists(engine, now);
  const webhookQueue = new WebhookQueue(engine);
  const webhookEndpoints = new WebhookEndpoints(engine, now, new SecretBox(options.webhookSecretKey));
  const sealed = await webhookEndpoints.sealStored();
  if (sealed > 0) logger.info({ endpoints: sealed }, 'webhook signing secrets sealed under WEBHOOK_SECRET_KEY');
  return {
    engine,
    accounts,
    ruleSets,
    shadows: new Shadows(engine, now),
    lists,
    reviews: new Reviews(engine, lists, webhookQueue, now),
    webhookQueue,
    webhookEndpoints,
    labels: new Labels(engine, now),
    decisions: new Decisions(engine),
    entities: new Entities(engine),
    ruleHits: new RuleHits(engine),
    users: new Users(engine, now),
    sessions: new Sessions(engine),
    secondFactors: new SecondFactors(engine),
    adminTokens: new AdminTokens(engine, now),
    loginThrottle: new LoginThrottle(engine),
    log,
    history,
    hashIdentifier,
    localCounts,
    health,
    migration,
    snapshot: (compiled = new Set()) => readSnapshot(engine, compiled),
    erase: (account, subject, by) => erasePerson({ engine, log, history, hash: hashIdentifier, now, local: localCounts }, account, subject, by),
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
      history: history?.stats() ?? null,
    }),
    async close() {
      clearInterval(historyPrune);
      hashIdentifier.stop();
      await history?.close();
      // What closing could not write (counted then) is said too.
      reportLosses?.();
      await log.close();
      await engine.close();
    },
  };
}

export { StoreError } from '../config/store-url.js';
export type { ConfigSnapshot } from './snapshot.js';
export type { ErasureResult, ErasureSubject } from './erasure.js';
