import { configTables } from './0001-config.js';
import { evaluationLog } from './0002-evaluation-log.js';
import { behaviourHistory } from './0003-history.js';
import { listsAndLabels } from './0004-lists-labels.js';
import { consoleUsers } from './0005-console-users.js';
import { firedRules } from './0006-fired-rules.js';
import { labelsByLabel } from './0007-labels-by-label.js';
import { backtests } from './0008-backtests.js';
import { shadowRuleSets } from './0009-shadow.js';
import { secondFactor } from './0010-second-factor.js';
import { reviewItems } from './0011-review-items.js';
import { velocityCounters } from './0012-velocity.js';
import { ruleHits } from './0013-rule-hits.js';
import { webhookAttempts } from './0014-webhook-attempts.js';
import { twoFactorPerUser } from './0015-two-factor-per-user.js';
import { slimmerWrites } from './0016-slimmer-writes.js';
import { historyByKey } from './0017-history-by-key.js';
import { historyReverseRows } from './0018-history-reverse-rows.js';
import { historyPacked } from './0019-history-packed.js';
import type { Migration } from './types.js';

/**
 * Every migration, in ascending `version` order. The same list runs on both engines. Versions are
 * never reused or renumbered once released.
 */
export const MIGRATIONS: readonly Migration[] = [configTables, evaluationLog, behaviourHistory, listsAndLabels, consoleUsers, firedRules, labelsByLabel, backtests, shadowRuleSets, secondFactor, reviewItems,
  velocityCounters, ruleHits, webhookAttempts, twoFactorPerUser,
  slimmerWrites,
  historyByKey,
  historyReverseRows,
  historyPacked];

/** The version a fully migrated store is at. */
export const LATEST_VERSION = MIGRATIONS.at(-1)!.version;

export type { EngineKind, Migration } from './types.js';
