import { z } from 'zod';
import { ACCOUNT_ID, ACCOUNT_ID_RULE } from '../keys/account-id.js';

/** Schemas shared by admin routes. Times are ISO-8601 strings in UTC, as in the evaluation response. */
export const iso = (ms: number) => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** Documented as a date-time; written by `iso` only, never parsed from a client. */
export const time = z.string().meta({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' });
export const accountId = z.string().regex(ACCOUNT_ID, ACCOUNT_ID_RULE).meta({ example: 'acme' });
export const accountRole = z.enum(['admin', 'analyst']);
export const accountStatus = z.enum(['active', 'disabled']);

/** Path parameters of every route on one account's data. */
export const accountParams = z.object({ account: accountId });

/** An e-mail address to log in with: the form only (what reaches the store is lower-cased). */
export const loginEmail = z.string().trim().min(3).max(254).regex(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address').meta({ example: 'ops@example.com' });

/** Cursor pagination: the `id` of the last item seen, and how many to return. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
