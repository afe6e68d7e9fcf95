/**
 * A change the store refused, with a stable code the CLI prints and the admin API will map to a
 * status: `not_found` 404, `conflict` 409, `invalid` 400.
 */
export class StoreRequestError extends Error {
  override name = 'StoreRequestError';
  constructor(
    readonly code: 'not_found' | 'conflict' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_CANTOPEN', 'SQLITE_READONLY']);

/**
 * What a failed query means for a caller of the admin API: `unavailable` when the store could not
 * be reached or used (PostgreSQL down, refusing or restarting: SQLSTATE class 08 and 57; SQLite
 * locked past its timeout, full, or unwritable: answered 503, never as a bug), `conflict` when a
 * unique constraint refused a row two writers raced for (answered 409), else null (a bug: 500).
 */
export function storeFailure(error: unknown): 'unavailable' | 'conflict' | null {
  const code = String((error as { code?: unknown }).code ?? '');
  const message = (error as Error).message ?? '';
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return 'conflict';
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR') || /^(08|57)/.test(code)) return 'unavailable';
  if (/Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message)) return 'unavailable';
  return null;
}
