import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig, type Config } from '../config/config.js';
import { readRuleFiles } from '../rules/templates.js';
import { cliActor, fail, runIfMain } from './common.js';
import { openStore, type Store } from '../store/index.js';
import { importAccountsFile } from '../store/accounts-import.js';

/**
 * `npm run keys -- <command>`: accounts and keys in the store (DATABASE_URL). A new key is printed
 * once, on stdout, and only its hash is stored. Every running replica picks a change up within
 * RELOAD_INTERVAL_MS: a rotated or revoked key is refused from then on.
 */
const usage = `Usage: npm run keys -- <command> [options]

  create --account ID                 a new key (the account is created, with RULES_DIR's rule sets, if new); prints it once
  rotate --account ID [--key KEY_ID]  replaces a key (default: the oldest) with a new one, printed once; the old one stops working
  revoke --account ID --key KEY_ID    the key stops working
  list                                accounts and their live keys: id, prefix, created, last used (never a key)
  import FILE                         brings in an accounts file from before the store: accounts, hashed keys, rules directories

The store is DATABASE_URL's (default sqlite:./var/risk.sqlite). An account has at most two keys; the
"default" account's API_KEYS count among them.`;


const iso = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString());

export async function run(argv: string[], out: (line: string) => void, err: (line: string) => void, env: Record<string, string | undefined> = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { account: { type: 'string' }, key: { type: 'string' } } });
  } catch (error) {
    // An unknown option (`--rules-dir`, `--file` of the accounts-file days) is refused, never ignored.
    fail(`${(error as Error).message}\n\n${usage}`);
  }
  const { positionals, values } = parsed;
  const command = positionals[0];
  if (command === undefined || command === 'help' || !['create', 'rotate', 'revoke', 'list', 'import'].includes(command)) {
    err(usage);
    return command === undefined || command === 'help' ? 0 : 2;
  }
  const config = loadConfig(env);
  const store = await openStore({ database: config.database, logger: pino({ level: 'warn' }, pino.destination(2)), retentionDays: 0, writeLog: false });
  try {
    return await execute(command, positionals.slice(1), values, { config, store, out, err });
  } finally {
    await store.close();
  }
}

interface Context {
  config: Config;
  store: Store;
  out: (line: string) => void;
  err: (line: string) => void;
}

async function execute(command: string, args: string[], values: { account?: string; key?: string }, { config, store, out, err }: Context): Promise<number> {
  const by = cliActor();
  const account = () => values.account ?? fail('--account is required');
  switch (command) {
    case 'create': {
      const id = account();
      const exists = (await store.accounts.get(id)) !== undefined;
      // A new account starts from RULES_DIR's rule sets, validated as at the service's start.
      const files = exists ? [] : await readRuleFiles(config.rulesDir);
      const created = await store.accounts.createKey(id, { actor: by, seed: { files, comment: 'seeded from RULES_DIR' } });
      if (created.accountCreated) err(`Created account "${id}" with the rule sets of ${config.rulesDir} (${files.map((f) => f.eventType).join(', ')}).`);
      err(`Created ${created.info.id} (${created.info.prefix}…) for account "${id}" in ${config.database.display}. Store the key now: it is not shown again.`);
      out(created.key);
      return 0;
    }
    case 'rotate': {
      const id = account();
      const rotated = await store.accounts.rotateKey(id, { actor: by, keyId: values.key });
      err(`Replaced ${rotated.replaced.id} with ${rotated.info.id} (${rotated.info.prefix}…) for account "${id}"; running services refuse ${rotated.replaced.id} within RELOAD_INTERVAL_MS. Store the key now: it is not shown again.`);
      out(rotated.key);
      return 0;
    }
    case 'revoke': {
      const id = account();
      const revoked = await store.accounts.revokeKey(id, values.key ?? fail('--key is required'), { actor: by });
      err(`Revoked ${revoked.id} of account "${id}"; running services refuse it within RELOAD_INTERVAL_MS.`);
      return 0;
    }
    case 'list': {
      for (const a of await store.accounts.list()) {
        const env = a.env_keys > 0 ? `, ${a.env_keys} key(s) from API_KEYS at the last start` : '';
        out(`${a.id}  ${a.status}  created ${iso(a.created_at)}${env}`);
        for (const k of a.keys) out(`  ${k.id}  ${k.prefix ?? '(imported)'}…  created ${iso(k.created_at)}  last used ${iso(k.last_used_at)}`);
      }
      return 0;
    }
    case 'import': {
      const path = args[0] ?? fail('import needs the accounts file: npm run keys -- import FILE');
      const templates = await readRuleFiles(config.rulesDir);
      const report = await importAccountsFile(store, path, { actor: by, templates });
      for (const a of report.accounts) {
        err(`${a.id}: ${a.created ? 'created' : 'already there'}, ${a.keysAdded} key(s) added${a.ruleSets.length > 0 ? `, rule sets ${a.ruleSets.join(', ')}` : ''}`);
      }
      err(`Imported ${path} into ${config.database.display}. The file is not read again: manage keys with "npm run keys" from now on.`);
      return 0;
    }
    default:
      return fail(usage);
  }
}

runIfMain(import.meta.url, (argv, out, err) => run(argv, out, err));
