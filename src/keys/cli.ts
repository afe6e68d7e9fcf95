import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readAccountsFile, writeAccountsFile, MAX_KEYS_PER_ACCOUNT, type AccountsFile } from './accounts-file.js';
import { generateKey, hashKey, keyIdOf } from './key.js';

/**
 * `npm run keys -- <command>`: manages the accounts file. A new key is printed once, on stdout,
 * and only its hash is stored. A running service picks the change up within RELOAD_INTERVAL_MS.
 */
const usage = `Usage: npm run keys -- <command> [options]

  create --account ID [--rules-dir DIR]   add a key to an account (created if new); prints the key once
  rotate --account ID [--key KEY_ID]      replace a key (default: the oldest) with a new one; the old one stops working
  revoke --account ID --key KEY_ID        remove a key
  list                                    accounts and key ids (never keys)

  --file PATH   the accounts file (default: $ACCOUNTS_FILE, else ./accounts.json)`;

class UsageError extends Error {}

function fail(message: string): never {
  throw new UsageError(message);
}

async function load(path: string): Promise<AccountsFile> {
  return existsSync(path) ? readAccountsFile(path) : { accounts: [] };
}

function newKey(): { key: string; stored: AccountsFile['accounts'][number]['keys'][number] } {
  const key = generateKey();
  const hash = hashKey(key);
  return { key, stored: { id: keyIdOf(hash), hash, created_at: new Date().toISOString() } };
}

export async function run(argv: string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { account: { type: 'string' }, key: { type: 'string' }, 'rules-dir': { type: 'string' }, file: { type: 'string' } },
  });
  const path = values.file ?? process.env.ACCOUNTS_FILE ?? './accounts.json';
  const command = positionals[0];
  const file = await load(path);
  const account = () => file.accounts.find((a) => a.id === (values.account ?? fail('--account is required')));

  switch (command) {
    case 'create': {
      let target = account();
      if (!target) {
        target = { id: values.account!, keys: [], ...(values['rules-dir'] ? { rules_dir: values['rules-dir'] } : {}) };
        file.accounts.push(target);
      }
      if (target.keys.length >= MAX_KEYS_PER_ACCOUNT) fail(`account "${target.id}" already has ${MAX_KEYS_PER_ACCOUNT} keys; use "rotate" to replace one`);
      const { key, stored } = newKey();
      target.keys.push(stored);
      await writeAccountsFile(path, file);
      err(`Created ${stored.id} for account "${target.id}" in ${path}. Store the key now: it is not shown again.`);
      out(key);
      return 0;
    }
    case 'rotate': {
      const target = account() ?? fail(`no account "${values.account}" in ${path}`);
      const oldest = [...target.keys].sort((a, b) => a.created_at.localeCompare(b.created_at))[0];
      const old = values.key ? target.keys.find((k) => k.id === values.key) : oldest;
      if (!old) fail(values.key ? `account "${target.id}" has no key ${values.key}` : `account "${target.id}" has no key to rotate`);
      const { key, stored } = newKey();
      target.keys = target.keys.map((k) => (k === old ? stored : k));
      await writeAccountsFile(path, file);
      err(`Replaced ${old.id} with ${stored.id} for account "${target.id}"; ${old.id} stops working when the service next reads ${path}. Store the key now: it is not shown again.`);
      out(key);
      return 0;
    }
    case 'revoke': {
      const target = account() ?? fail(`no account "${values.account}" in ${path}`);
      const id = values.key ?? fail('--key is required');
      if (!target.keys.some((k) => k.id === id)) fail(`account "${target.id}" has no key ${id}`);
      target.keys = target.keys.filter((k) => k.id !== id);
      await writeAccountsFile(path, file);
      err(`Revoked ${id} of account "${target.id}".`);
      return 0;
    }
    case 'list': {
      for (const a of file.accounts) {
        out(`${a.id}${a.rules_dir ? ` (rules: ${a.rules_dir})` : ''}`);
        for (const k of a.keys) out(`  ${k.id}  created ${k.created_at}`);
      }
      return 0;
    }
    default:
      err(usage);
      return command === undefined || command === 'help' ? 0 : 2;
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/').split('/').pop()!);
if (isMain) {
  run(process.argv.slice(2), (l) => process.stdout.write(`${l}\n`), (l) => process.stderr.write(`${l}\n`)).then(
    (code) => process.exit(code),
    (error: Error) => {
      process.stderr.write(`${error instanceof UsageError ? '' : 'error: '}${error.message}\n`);
      process.exit(2);
    },
  );
}
