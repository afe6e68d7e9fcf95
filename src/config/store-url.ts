import { resolve } from 'node:path';

/**
 * `DATABASE_URL`, parsed once at boot: which engine, where, and how to name it in messages
 * (a PostgreSQL password never appears in a log line or an error).
 *
 *   sqlite:PATH                      a file, relative to the working directory (default sqlite:./var/risk.sqlite)
 *   postgres://user:pass@host/db     PostgreSQL 14 or newer; TLS from the URL (sslmode=require, sslrootcert=…)
 */
export type DatabaseUrl =
  | { engine: 'sqlite'; /** Absolute path of the database file. */ path: string; display: string }
  | { engine: 'postgres'; connectionString: string; display: string };

export const DEFAULT_DATABASE_URL = 'sqlite:./var/risk.sqlite';

export function parseDatabaseUrl(value: string): DatabaseUrl | { error: string } {
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '' || path === ':memory:') {
      // The log writer runs in its own thread with its own connection: it needs a file both can open.
      return { error: 'must name a file, e.g. sqlite:./var/risk.sqlite (an in-memory database cannot be shared with the log writer)' };
    }
    return { engine: 'sqlite', path: resolve(path), display: value };
  }
  if (value.startsWith('postgres://') || value.startsWith('postgresql://')) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return { error: 'is not a valid postgres:// URL' };
    }
    if (url.hostname === '' && !url.searchParams.has('host')) return { error: 'must name a host, e.g. postgres://risk@db.internal:5432/risk' };
    if (url.password !== '') url.password = '***';
    return { engine: 'postgres', connectionString: value, display: url.toString() };
  }
  return { error: 'must start with sqlite: or postgres:// (e.g. sqlite:./var/risk.sqlite, postgres://user@host:5432/db)' };
}

/** Every message about the store names the variable and the database, never a password. */
export class StoreError extends Error {
  override name = 'StoreError';
  constructor(database: DatabaseUrl, detail: string) {
    super(`DATABASE_URL (${database.display}): ${detail}`);
  }
}
