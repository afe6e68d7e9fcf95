import type { Kysely } from 'kysely';

export type EngineKind = 'sqlite' | 'postgres';

/**
 * One schema change, the same for both engines (where their SQL differs, `engine` says which).
 * Forward-only: released migrations are never edited or renumbered; a change is a new one.
 */
export interface Migration {
  /** Ascending along MIGRATIONS, from 1; never reused. */
  version: number;
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration sees the schema as it was then, not today's types
  up(db: Kysely<any>, engine: EngineKind): Promise<void>;
}

/** Column types that differ between the engines. */
export const types = (engine: EngineKind) => ({
  /** Milliseconds since the epoch. */
  time: engine === 'postgres' ? ('bigint' as const) : ('integer' as const),
  json: engine === 'postgres' ? ('jsonb' as const) : ('text' as const),
  /** Written once and read whole (the evaluation log): kept as the exact text, which PostgreSQL only validates. */
  document: engine === 'postgres' ? ('json' as const) : ('text' as const),
});
