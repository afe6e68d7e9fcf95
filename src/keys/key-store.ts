import type { Logger } from 'pino';
import type { Account, Resource } from '../evaluation/ports.js';
import type { SourceStatus } from '../evaluation/facts.js';
import { watchFiles, type FileWatcher } from '../files/watch.js';
import { readAccountsFile, MAX_KEYS_PER_ACCOUNT, type AccountsFile } from './accounts-file.js';
import { hashKey, MIN_KEY_LENGTH, sameHash } from './key.js';

export interface KeyStore extends Resource {
  /** The account a presented key belongs to, or `null`. */
  authenticate(key: string): Account | null;
  /** The rules directories accounts name, so they are validated at start-up rather than on a first request. */
  rulesDirs(): string[];
  /** Reads the accounts file now if it changed, instead of at the next poll (tests, a SIGHUP handler). */
  checkForChanges(): Promise<void>;
}

export interface KeyStoreOptions {
  /** Plain keys from `API_KEYS`: one account, `default`. */
  apiKeys: string[];
  accountsFile: string | undefined;
  reloadIntervalMs: number;
  logger: Logger;
}

export class KeyConfigError extends Error {
  override name = 'KeyConfigError';
}

type Index = Map<string, { hash: string; account: Account }>;

/** Checked at start-up: short keys and a third key are refused before anything listens. */
function indexApiKeys(apiKeys: string[]): Index {
  if (apiKeys.length > MAX_KEYS_PER_ACCOUNT) {
    throw new KeyConfigError(`API_KEYS: an account has at most ${MAX_KEYS_PER_ACCOUNT} keys, got ${apiKeys.length}`);
  }
  const index: Index = new Map();
  const account: Account = { id: 'default', rulesDir: undefined };
  apiKeys.forEach((key, i) => {
    if (key.length < MIN_KEY_LENGTH) {
      throw new KeyConfigError(`API_KEYS: key ${i + 1} is ${key.length} characters; keys must be at least ${MIN_KEY_LENGTH} (make one with "npm run keys -- create")`);
    }
    const hash = hashKey(key);
    index.set(hash, { hash, account });
  });
  return index;
}

function indexAccountsFile(file: AccountsFile): Index {
  const index: Index = new Map();
  for (const stored of file.accounts) {
    const account: Account = { id: stored.id, rulesDir: stored.rules_dir };
    for (const key of stored.keys) index.set(key.hash, { hash: key.hash, account });
  }
  return index;
}

/**
 * Keys from the environment and the accounts file, indexed by hash. The accounts file is watched:
 * a rotated key stops working in every replica within `reloadIntervalMs`, without a restart; a
 * broken file is refused and the last good one keeps serving.
 */
export async function createKeyStore(options: KeyStoreOptions): Promise<KeyStore> {
  const fromEnv = indexApiKeys(options.apiKeys);
  let fromFile: Index = new Map();
  let fileStatus: SourceStatus | null = null;
  let watcher: FileWatcher | null = null;

  const path = options.accountsFile;
  if (path !== undefined) {
    // At start-up a broken accounts file stops the start: serving with no keys would be an outage in disguise.
    const file = await readAccountsFile(path);
    fromFile = indexAccountsFile(file);
    fileStatus = statusOf(path, file, null);
    watcher = await watchFiles(
      [path],
      async () => {
        try {
          const next = await readAccountsFile(path);
          fromFile = indexAccountsFile(next);
          fileStatus = statusOf(path, next, null);
          options.logger.info({ file: path, accounts: next.accounts.length, keys: fromFile.size }, 'accounts file reloaded');
        } catch (error) {
          fileStatus = { ...fileStatus!, error: (error as Error).message };
          options.logger.error({ file: path, error: (error as Error).message }, 'accounts file refused; the last good copy keeps serving');
        }
      },
      options.reloadIntervalMs,
    );
  }

  return {
    authenticate(key) {
      // Only hashes are compared, never keys: the Map's timing can reveal at most something about the
      // SHA-256 of the attacker's own input, which does not lead to a stored key (preimage resistance).
      // The confirming comparison is constant-time all the same.
      const hash = hashKey(key);
      const entry = fromFile.get(hash) ?? fromEnv.get(hash);
      return entry && sameHash(entry.hash, hash) ? entry.account : null;
    },
    checkForChanges: async () => watcher?.check(),
    rulesDirs() {
      const dirs = new Set<string>();
      for (const { account } of fromFile.values()) if (account.rulesDir !== undefined) dirs.add(account.rulesDir);
      return [...dirs];
    },
    status() {
      const env: SourceStatus = {
        name: 'keys.env', source: 'API_KEYS', type: 'keys', loaded: fromEnv.size > 0,
        build_date: null, entries: fromEnv.size, error: null,
      };
      return fileStatus ? [env, fileStatus] : [env];
    },
    async close() {
      watcher?.close();
    },
  };
}

function statusOf(path: string, file: AccountsFile, error: string | null): SourceStatus {
  const keys = file.accounts.reduce((n, a) => n + a.keys.length, 0);
  return { name: 'keys.accounts_file', source: path, type: 'accounts', loaded: true, build_date: null, entries: keys, error };
}
