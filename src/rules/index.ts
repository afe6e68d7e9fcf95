import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Account, RuleBook } from '../evaluation/ports.js';
import { evaluateRuleSet } from './engine.js';
import { RuleDirectory } from './rule-directory.js';

export interface RuleBookOptions {
  config: Config;
  logger: Logger;
  /**
   * Accounts' own rules directories to load now, with the start-up rule (any problem throws). Others
   * are loaded on the account's first request, leniently: a broken file there is logged, shown in
   * `status()` and not served, because one account's typo must not take the service down.
   */
  accountRulesDirs?: string[];
}

/** A RuleBook that can also be told to look for changes now (tests, an admin signal). */
export interface ReloadableRuleBook extends RuleBook {
  checkForChanges(): Promise<void>;
}

/**
 * Loads `RULES_DIR` (throwing an Error that names the file and the path inside it when any rule file
 * is invalid) and keeps every loaded directory current by polling every `reloadIntervalMs`.
 */
export async function loadRuleBook({ config, logger, accountRulesDirs = [] }: RuleBookOptions): Promise<ReloadableRuleBook> {
  const log = logger.child({ component: 'rules' });
  const directories = new Map<string, RuleDirectory>();
  const watching: Promise<void>[] = [];
  const open = (dir: string, strict: boolean): RuleDirectory => {
    const directory = RuleDirectory.open(dir, log, strict);
    directories.set(dir, directory);
    watching.push(directory.watch(config.reloadIntervalMs));
    return directory;
  };

  const main = open(resolve(config.rulesDir), true);
  try {
    for (const dir of accountRulesDirs) if (!directories.has(resolve(dir))) open(resolve(dir), true);
  } catch (error) {
    for (const directory of directories.values()) directory.close();
    throw error;
  }
  await Promise.all(watching);

  const directoryFor = (account: Account): RuleDirectory => {
    if (account.rulesDir === undefined) return main;
    const dir = resolve(account.rulesDir);
    return directories.get(dir) ?? open(dir, false);
  };

  return {
    eventTypes: (account) => directoryFor(account).eventTypes(),
    evaluate(account, context) {
      const ruleSet = directoryFor(account).ruleSet(context.event_type);
      return ruleSet === undefined ? undefined : evaluateRuleSet(context, ruleSet);
    },
    status: () => [...directories.values()].flatMap((directory) => directory.status()),
    async checkForChanges() {
      await Promise.all(watching);
      await Promise.all([...directories.values()].map((directory) => directory.check()));
    },
    async close() {
      for (const directory of directories.values()) directory.close();
      await Promise.allSettled(watching);
    },
  };
}
