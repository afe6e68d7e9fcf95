import Sqlite from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { inject } from 'vitest';
import type { Engine } from '../../src/store/engine.js';
import { openStore, type Store, type StoreOptions } from '../../src/store/index.js';
import { sqliteHistory, type SqliteHistoryOptions } from '../../src/store/history-sqlite.js';
import { migrate } from '../../src/store/migrate.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { openPostgres } from '../../src/store/postgres.js';
import { openSqlite } from '../../src/store/sqlite.js';
import { openSqliteWriterThread } from '../../src/store/sqlite-log-writer.js';
import { parseDatabaseUrl, type DatabaseUrl } from '../../src/config/store-url.js';
import { createDatabase } from './postgres.js';
import './global-setup.js';

/** Both engines, for suites that run the same contract against each. */
export const ENGINES = ['sqlite', 'postgres'] as const;
export type EngineName = (typeof ENGINES)[number];

/** A fresh, empty store's DATABASE_URL: a SQLite file in a new temporary directory, or a new database on the run's PostgreSQL. */
export async function freshDatabaseUrl(engine: EngineName): Promise<string> {
  if (engine === 'sqlite') return `sqlite:${join(mkdtempSync(join(tmpdir(), 'risk-store-')), 'risk.sqlite')}`;
  return createDatabase(inject('postgresAdminUrl'));
}

export function database(url: string): DatabaseUrl {
  const parsed = parseDatabaseUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

/** The engine alone (no store, no migrations) on a database: what the migration tests drive. */
export async function openEngine(db: DatabaseUrl): Promise<Engine> {
  return db.engine === 'sqlite' ? openSqlite(db) : await openPostgres(db, { onPoolError: () => {} });
}

/** A fresh database migrated to `version` exactly, as an older release left it: its engine, and its URL for the store that upgrades it. */
export async function engineAtVersion(engine: EngineName, version: number): Promise<{ old: Engine; db: DatabaseUrl }> {
  const db = database(await freshDatabaseUrl(engine));
  const old = await openEngine(db);
  try {
    const { to } = await migrate(old, MIGRATIONS.filter((m) => m.version <= version));
    if (to !== version) throw new Error(`migrated to ${to}, not ${version}`);
  } catch (error) {
    await old.close();
    throw error;
  }
  return { old, db };
}

/** The real store on a fresh database, as the service opens it. */
export async function openTestStore(engine: EngineName | { url: string }, options: Partial<StoreOptions> = {}): Promise<Store> {
  const url = typeof engine === 'string' ? await freshDatabaseUrl(engine) : engine.url;
  return openStore({ database: database(url), logger: pino({ level: 'silent' }), retentionDays: 30, writeLog: true, ...options });
}

/**
 * SQLite's behaviour history on a fresh, migrated file, with a writer thread of its own: the store's
 * history without the rest of the store, for options the store does not take (bounds, keepBytes).
 * `path` is the file's, for another connection (one that holds the write lock, say).
 */
export async function freshSqliteHistory(options: Omit<SqliteHistoryOptions, 'path' | 'thread'>) {
  const db = await freshSqliteFile();
  return { history: sqliteHistory({ path: db.path, thread: await openSqliteWriterThread(db, 1), ...options }), path: db.path };
}

/** A fresh SQLite file, migrated, and nothing open on it: its URL, for a writer thread and a history of the test's own. */
export async function freshSqliteFile(): Promise<DatabaseUrl & { engine: 'sqlite' }> {
  const url = await freshDatabaseUrl('sqlite');
  await (await openTestStore({ url })).close(); // migrated
  const db = database(url);
  if (db.engine !== 'sqlite') throw new Error('a SQLite url');
  return db;
}

/**
 * EXPLAIN QUERY PLAN on a fresh, migrated SQLite store: `plan(text, values)` gives the plan's lines
 * (`SEARCH history_packed USING …`) of a statement, its `?` or named parameters bound to `values`.
 * The store and the read-only connection beside it close when `use` returns.
 */
export async function withSqlitePlans<T>(use: (plan: (text: string, values: unknown[] | Record<string, unknown>) => string[]) => T | Promise<T>): Promise<T> {
  const url = await freshDatabaseUrl('sqlite');
  const store = await openTestStore({ url });
  const db = database(url);
  if (db.engine !== 'sqlite') throw new Error('a SQLite url');
  const sqlite = new Sqlite(db.path, { readonly: true });
  try {
    return await use((text, values) => {
      const rows = Array.isArray(values) ? sqlite.prepare(`explain query plan ${text}`).all(...values) : sqlite.prepare(`explain query plan ${text}`).all(values);
      return (rows as Array<{ detail: string }>).map((r) => r.detail);
    });
  } finally {
    sqlite.close();
    await store.close();
  }
}
