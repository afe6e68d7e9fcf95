import type { Logger } from 'pino';
import type { SourceStatus } from '../core/ports.js';
import type { Account, Resource } from '../core/ports.js';
import { hashKey, keyProblem, MAX_KEYS_PER_ACCOUNT, sameHash } from './key.js';

/**
 * What the key store reads from the store's snapshot: the live keys of active accounts. A port the
 * store implements (src/store/snapshot.ts), so keys depend on no adapter.
 */
export interface KeySnapshot {
  keys: ReadonlyArray<{ id: string; hash: string; account_id: string }>;
}

/**
 * The keys the request path checks, in memory: `API_KEYS` (account `default`) and the store's live
 * keys, swapped whole whenever the store changes (src/store/sync.ts), so a rotated or revoked key is
 * refused from the next poll on, in every replica. Last-used times are noted in memory and written
 * at most once a minute per key, off the request path.
 */
export interface KeyStore extends Resource {
  /** The account a presented key belongs to, or `null`. */
  authenticate(key: string): Account | null;
  /** Serves the store's keys from now on. */
  replace(snapshot: KeySnapshot): void;
  /** Writes the last-used times noted since the last write (the minute timer does this on its own). */
  writeLastUsed(): Promise<void>;
}

export interface KeyStoreOptions {
  /** Plain keys from `API_KEYS`, for the account `default`. */
  apiKeys: string[];
  logger: Logger;
  /** Stores last-used times; a failure is logged and the times are tried again next time. */
  touch: (uses: Array<{ id: string; at: number }>) => Promise<void>;
  touchIntervalMs?: number;
  now?: () => number;
}

export class KeyConfigError extends Error {
  override name = 'KeyConfigError';
}

const DEFAULT_ACCOUNT = 'default';
const TOUCH_INTERVAL_MS = 60_000;

interface Entry {
  hash: string;
  account: Account;
  /** The store's key id; null for an `API_KEYS` key, which has no row. */
  id: string | null;
  usedAt: number;
  writtenAt: number;
}

/** Checked at start-up: a key no client could present, a short key or a third key stop the start. */
export function checkApiKeys(apiKeys: string[]): void {
  if (apiKeys.length > MAX_KEYS_PER_ACCOUNT) {
    throw new KeyConfigError(`API_KEYS: an account has at most ${MAX_KEYS_PER_ACCOUNT} keys, got ${apiKeys.length}`);
  }
  apiKeys.forEach((key, i) => {
    const problem = keyProblem(key);
    if (problem !== null) throw new KeyConfigError(`API_KEYS: key ${i + 1} ${problem} (make one with "npm run keys -- create")`);
  });
}

export function createKeyStore(options: KeyStoreOptions): KeyStore {
  checkApiKeys(options.apiKeys);
  const now = options.now ?? Date.now;
  /** One object per account id: the rate limit and the rule book key on `id`, which the store keeps unique. */
  const accounts = new Map<string, Account>();
  const accountOf = (id: string): Account => {
    let account = accounts.get(id);
    if (account === undefined) accounts.set(id, (account = { id }));
    return account;
  };
  const fromEnv = new Map<string, Entry>();
  for (const key of options.apiKeys) {
    const hash = hashKey(key);
    fromEnv.set(hash, { hash, account: accountOf(DEFAULT_ACCOUNT), id: null, usedAt: 0, writtenAt: 0 });
  }
  let fromStore = new Map<string, Entry>();

  const writeLastUsed = async () => {
    const due = [...fromStore.values()].filter((e) => e.usedAt > e.writtenAt);
    if (due.length === 0) return;
    const uses = due.map((e) => ({ id: e.id!, at: e.usedAt }));
    try {
      await options.touch(uses);
      due.forEach((entry, i) => (entry.writtenAt = uses[i]!.at));
    } catch (error) {
      options.logger.warn({ error: (error as Error).message, keys: uses.length }, 'key last-used times not written; trying again in a minute');
    }
  };
  const timer = setInterval(() => void writeLastUsed(), options.touchIntervalMs ?? TOUCH_INTERVAL_MS);
  timer.unref();

  return {
    authenticate(key) {
      // Only hashes are compared, never keys: the Map's timing can reveal at most something about the
      // SHA-256 of the attacker's own input, which does not lead to a stored key (preimage resistance).
      // The confirming comparison is constant-time all the same.
      const hash = hashKey(key);
      const entry = fromStore.get(hash) ?? fromEnv.get(hash);
      if (entry === undefined || !sameHash(entry.hash, hash)) return null;
      entry.usedAt = now();
      return entry.account;
    },
    replace(snapshot) {
      const next = new Map<string, Entry>();
      for (const key of snapshot.keys) {
        // A key that stays keeps its last-used bookkeeping across reloads.
        const previous = fromStore.get(key.hash);
        next.set(key.hash, { hash: key.hash, account: accountOf(key.account_id), id: key.id, usedAt: previous?.usedAt ?? 0, writtenAt: previous?.writtenAt ?? 0 });
      }
      const removed = [...fromStore.values()].filter((e) => !next.has(e.hash)).map((e) => e.id);
      fromStore = next;
      if (removed.length > 0) options.logger.info({ keys: removed }, 'keys no longer accepted');
    },
    writeLastUsed,
    status(): SourceStatus[] {
      return [
        { name: 'keys.env', source: 'API_KEYS', type: 'keys', loaded: fromEnv.size > 0, build_date: null, entries: fromEnv.size, error: null },
        { name: 'keys.store', source: 'store', type: 'keys', loaded: true, build_date: null, entries: fromStore.size, error: null },
      ];
    },
    async close() {
      clearInterval(timer);
      await writeLastUsed();
    },
  };
}
