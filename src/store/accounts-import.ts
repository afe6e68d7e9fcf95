import { hash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { readRuleFiles } from '../rules/templates.js';
import { appendAudit } from '../store/audit.js';
import type { Store } from '../store/index.js';
import type { RuleFileText } from '../rules/templates.js';
import { readAccountsFile, type AccountsFile } from '../keys/accounts-file.js';
import { keyIdOf } from '../keys/key.js';

/**
 * An accounts file from before the store, brought in once: its accounts (created if new), their
 * hashed keys, and each account's rules directory as that account's rule sets (every file
 * validated first; one bad file and nothing is imported). One transaction: all of it or none.
 * The store remembers the file's fingerprint, so `ACCOUNTS_FILE` at start imports it once.
 */
export interface ImportReport {
  sha256: string;
  accounts: Array<{ id: string; created: boolean; keysAdded: number; ruleSets: string[] }>;
}

interface Imported {
  sha256: string;
  path: string;
  at: string;
}

const SETTING = 'accounts_file.imported';

export async function importAccountsFile(store: Store, path: string, by: { actor: string; templates: RuleFileText[] }): Promise<ImportReport> {
  const { text, file } = await readAccountsFile(path);
  const sha256 = hash('sha256', text, 'hex');
  const rules = await readRulesDirectories(file);
  return store.engine.db.transaction().execute(async (trx) => {
    const report: ImportReport = { sha256, accounts: [] };
    for (const account of file.accounts) {
      const own = rules.get(account.id);
      const seed = own ? { files: own, comment: `imported from ${account.rules_dir}` } : { files: by.templates, comment: 'seeded from RULES_DIR' };
      const created = await store.accounts.ensure(trx, account.id, seed, by.actor);
      let ruleSets = seed.files.map((f) => `${f.eventType} v1`);
      if (!created) {
        ruleSets = own ? (await store.ruleSets.applyIn(trx, account.id, own, { actor: by.actor, comment: seed.comment })).map((r) => `${r.eventType} v${r.version} ${r.outcome}`) : [];
      }
      const keys = account.keys.map((k) => ({ id: keyIdOf(k.hash), hash: k.hash, created_at: Date.parse(k.created_at) }));
      const keysAdded = await store.accounts.addHashedKeys(trx, account.id, keys, by.actor);
      report.accounts.push({ id: account.id, created, keysAdded, ruleSets });
    }
    const imported: Imported = { sha256, path: resolve(path), at: new Date().toISOString() };
    await trx.insertInto('settings').values({ name: SETTING, value: JSON.stringify(imported) })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value: (eb) => eb.ref('excluded.value') })).execute();
    await appendAudit(trx, Date.now(), { actor: by.actor, account_id: null, action: 'accounts_file.import', target: resolve(path), before: null, after: report });
    return report;
  });
}

/**
 * `ACCOUNTS_FILE` at start: imported the first time; afterwards not read again, and a file that
 * changed since is refused (a rotation made by editing it would otherwise silently not happen).
 */
export async function importAccountsFileOnce(store: Store, path: string, by: { templates: RuleFileText[]; logger: Logger }): Promise<void> {
  const row = await store.engine.db.selectFrom('settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  const previous = row ? (JSON.parse(row.value) as Imported) : null;
  if (previous) {
    const { text } = await readAccountsFile(path);
    if (hash('sha256', text, 'hex') !== previous.sha256) {
      throw new Error(
        `ACCOUNTS_FILE (${path}) changed since it was imported into the store on ${previous.at}; it is no longer read. ` +
          'Make the change with "npm run keys" (create, rotate, revoke), then remove ACCOUNTS_FILE from the environment.',
      );
    }
    by.logger.warn({ file: path, imported_at: previous.at }, 'ACCOUNTS_FILE was imported into the store and is no longer read: remove it from the environment');
    return;
  }
  const report = await importAccountsFile(store, path, { actor: 'system', templates: by.templates });
  by.logger.info({ file: path, accounts: report.accounts }, 'ACCOUNTS_FILE imported into the store; it is not read again (remove it from the environment)');
}

async function readRulesDirectories(file: AccountsFile): Promise<Map<string, RuleFileText[]>> {
  const rules = new Map<string, RuleFileText[]>();
  for (const account of file.accounts) {
    // Relative to the working directory, as the service read it before the store.
    if (account.rules_dir !== undefined) rules.set(account.id, await readRuleFiles(resolve(account.rules_dir)));
  }
  return rules;
}
