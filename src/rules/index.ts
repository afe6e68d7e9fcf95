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
   * `status()` and not served, because one account's typo must not take the service down. That
   * first request waits for the read (`eventTypes` answers a promise then, and only then).
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
  const keep = (directory: RuleDirectory): RuleDirectory => {
    directories.set(directory.dir, directory);
    watching.push(directory.watch(config.reloadIntervalMs));
    return directory;
  };

  try {
    const main = keep(await RuleDirectory.load(resolve(config.rulesDir), log));
    for (const dir of accountRulesDirs) if (!directories.has(resolve(dir))) keep(await RuleDirectory.load(resolve(dir), log));
    await Promise.all(watching);
    return ruleBook(main);
  } catch (error) {
    for (const directory of directories.values()) directory.close();
    throw error;
  }

  function ruleBook(main: RuleDirectory): ReloadableRuleBook {
    // An account's own directory not loaded at start is read on its first request, once: the
    // directory is kept from then on, broken or not, and its watcher picks up the fix.
    const directoryFor = (account: Account): RuleDirectory => {
      if (account.rulesDir === undefined) return main;
      const dir = resolve(account.rulesDir);
      return directories.get(dir) ?? keep(RuleDirectory.start(dir, log));
    };
    return {
      eventTypes(account) {
        const directory = directoryFor(account);
        return directory.loaded ? directory.eventTypes() : directory.ready().then(() => directory.eventTypes());
      },
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
}
