import type { KeySnapshot } from '../keys/key-store.js';
import type { StoredListEntry } from '../lists/list-book.js';
import type { RuleSetSnapshot } from '../rules/rule-book.js';
import type { Engine } from './engine.js';

/**
 * What the request path serves, read from the store in one pass: the live keys of active accounts
 * (the key store's port), their published rule sets and shadows (the rule book's port) and list entries. Rule texts are fetched only for versions the reader has not
 * compiled yet: published versions never change, so a reload costs what changed.
 */
export interface ConfigSnapshot extends KeySnapshot, RuleSetSnapshot {
  /** Every active account's list entries not yet expired (expiry is checked again at match time). */
  lists: StoredListEntry[];
}

const CHUNK = 500;

export async function readSnapshot(engine: Engine, compiled: ReadonlySet<number>): Promise<ConfigSnapshot> {
  const db = engine.db;
  // The revision first: a change that lands while the rest is read bumps it again, so the next poll reloads.
  const revision = await engine.revision();
  const keys = await db.selectFrom('api_keys').innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(['api_keys.id', 'api_keys.hash', 'api_keys.account_id'])
    .where('api_keys.revoked_at', 'is', null).where('accounts.status', '=', 'active').execute();
  const published = await db.selectFrom('rule_set_versions').innerJoin('accounts', 'accounts.id', 'rule_set_versions.account_id')
    .select(['rule_set_versions.id', 'rule_set_versions.account_id', 'rule_set_versions.event_type', 'rule_set_versions.version'])
    .where('rule_set_versions.status', '=', 'published').where('accounts.status', '=', 'active').execute();
  const missing = published.filter((p) => !compiled.has(p.id)).map((p) => p.id);
  const texts = new Map<number, string>();
  for (let i = 0; i < missing.length; i += CHUNK) {
    const rows = await db.selectFrom('rule_set_versions').select(['id', 'yaml']).where('id', 'in', missing.slice(i, i + CHUNK)).execute();
    for (const row of rows) texts.set(row.id, row.yaml);
  }
  const lists = await db.selectFrom('list_entries').innerJoin('accounts', 'accounts.id', 'list_entries.account_id')
    .select(['list_entries.id', 'list_entries.account_id', 'list_entries.list', 'list_entries.kind', 'list_entries.value', 'list_entries.reason', 'list_entries.expires_at'])
    .where('accounts.status', '=', 'active')
    .where((eb) => eb.or([eb('list_entries.expires_at', 'is', null), eb('list_entries.expires_at', '>', Date.now())])).execute();
  const shadows = await db.selectFrom('rule_set_shadows').innerJoin('accounts', 'accounts.id', 'rule_set_shadows.account_id')
    .select(['rule_set_shadows.account_id', 'rule_set_shadows.event_type', 'rule_set_shadows.rule_set_version', 'rule_set_shadows.version', 'rule_set_shadows.started_at', 'rule_set_shadows.yaml'])
    .where('accounts.status', '=', 'active').execute();
  return {
    revision, keys, shadows, ruleSets: published.map((p) => ({ ...p, yaml: texts.get(p.id) ?? null })),
    lists: lists.map((l) => ({ ...l, id: Number(l.id) })),
  };
}
