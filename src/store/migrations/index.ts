import { configTables } from './0001-config.js';
import { evaluationLog } from './0002-evaluation-log.js';
import { behaviourHistory } from './0003-history.js';
import { listsAndLabels } from './0004-lists-labels.js';
import type { Migration } from './types.js';

/** Every migration, in order; `version` is the position. The same list runs on both engines. */
export const MIGRATIONS: readonly Migration[] = [configTables, evaluationLog, behaviourHistory, listsAndLabels];

export type { EngineKind, Migration } from './types.js';
