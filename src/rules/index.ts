import { readdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { RuleBook } from '../evaluation/ports.js';

export interface RuleBookOptions {
  config: Config;
  logger: Logger;
}

/** Seam: the event types are the rule files present; until the engine lands no rule fires. */
export async function loadRuleBook({ config }: RuleBookOptions): Promise<RuleBook> {
  const eventTypes = readdirSync(config.rulesDir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .map((f) => f.replace(/\.(ya?ml|json)$/, ''));
  return {
    eventTypes: () => eventTypes,
    evaluate(_account, context) {
      if (!eventTypes.includes(context.event_type)) return undefined;
      return { details: [], fraud_score: 0, state: 'approve', dry_run: [], signals: [], unavailable: [] };
    },
    status: () => [],
    close: async () => {},
  };
}
