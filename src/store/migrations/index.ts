import { configTables } from './0001-config.js';
import { evaluationLog } from './0002-evaluation-log.js';
import type { Migration } from './types.js';

/** Every migration, in order; `version` is the position. The same list runs on both engines. */
export const MIGRATIONS: readonly Migration[] = [configTables, evaluationLog];

export type { EngineKind, Migration } from './types.js';
