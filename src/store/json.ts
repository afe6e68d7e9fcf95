/**
 * JSON columns: PostgreSQL's jsonb comes back parsed, SQLite's text as a string. Written as text
 * on both (PostgreSQL casts it on insert).
 */
export const toJson = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

export function fromJson<T>(value: unknown): T | null {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
