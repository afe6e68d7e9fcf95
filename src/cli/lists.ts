import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { cliActor, fail, runIfMain } from './common.js';
import { loadConfig } from '../config/config.js';
import { DEFAULT_ACCOUNT } from '../store/accounts.js';
import { openStore } from '../store/index.js';
import type { ListEntry } from '../store/lists.js';
import { LIST_KINDS, LIST_NAMES } from '../lists/facts.js';

/**
 * `npm run lists -- <command>`: an account's block and allow lists in the store. Every change is
 * audited and reaches every running replica within RELOAD_INTERVAL_MS.
 */
const usage = `Usage: npm run lists -- <command> [options]

  add --list block|allow --kind email|domain|ip|device|user --value VALUE --reason TEXT [--expires ISO-8601 | --days N]
                                      adds an entry (an IP may be a CIDR range; a domain lists its subdomains too)
  remove --id N                       removes an entry
  list [--list block|allow] [--kind KIND] [--all]   the entries, newest first (--all: expired ones too)

  --account ID   the account (default: "default", the account of API_KEYS)

The store is DATABASE_URL's (default sqlite:./var/risk.sqlite).`;

const DAY_MS = 86_400_000;

export async function run(argv: string[], out: (line: string) => void, err: (line: string) => void, env: Record<string, string | undefined> = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        account: { type: 'string' }, list: { type: 'string' }, kind: { type: 'string' }, value: { type: 'string' }, reason: { type: 'string' },
        expires: { type: 'string' }, days: { type: 'string' }, id: { type: 'string' }, all: { type: 'boolean' },
      },
    });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${usage}`);
  }
  const { positionals, values } = parsed;
  const command = positionals[0];
  if (command === undefined || command === 'help' || !['add', 'remove', 'list'].includes(command)) {
    err(usage);
    return command === undefined || command === 'help' ? 0 : 2;
  }
  const list = values.list === undefined ? undefined : oneOf('--list', values.list, LIST_NAMES);
  const kind = values.kind === undefined ? undefined : oneOf('--kind', values.kind, LIST_KINDS);
  const account = values.account ?? DEFAULT_ACCOUNT;
  const config = loadConfig(env);
  const store = await openStore({ database: config.database, logger: pino({ level: 'warn' }, pino.destination(2)), retentionDays: 0, writeLog: false });
  try {
    switch (command) {
      case 'add': {
        const expires = values.expires !== undefined ? Date.parse(values.expires) : values.days !== undefined ? Date.now() + Number(values.days) * DAY_MS : null;
        if (expires !== null && !Number.isFinite(expires)) fail('--expires must be an ISO-8601 time (2026-12-31T00:00:00Z), --days a number');
        const added = await store.lists.add(account, {
          list: list ?? fail('--list is required (block or allow)'),
          kind: kind ?? fail(`--kind is required (${LIST_KINDS.join(', ')})`),
          value: values.value ?? fail('--value is required'),
          reason: values.reason ?? fail('--reason is required: say why, for whoever reads the list next'),
          expires_at: expires,
        }, { actor: cliActor() });
        out(line(added));
        return 0;
      }
      case 'remove': {
        const id = Number(values.id ?? fail('--id is required (see "list")'));
        if (!Number.isInteger(id) || id < 1) fail('--id must be an entry id (see "list")');
        out(`removed ${line(await store.lists.remove(account, id, { actor: cliActor() }))}`);
        return 0;
      }
      default: {
        for (const entry of await store.lists.list(account, { list, kind, includeExpired: values.all === true })) out(line(entry));
        return 0;
      }
    }
  } finally {
    await store.close();
  }
}

function oneOf<T extends string>(option: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) fail(`${option} must be one of ${allowed.join(', ')}`);
  return value as T;
}

const iso = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString());

function line(e: ListEntry): string {
  return `${e.id}  ${e.list.padEnd(5)}  ${e.kind.padEnd(6)}  ${e.value}  "${e.reason}"  by ${e.author}  ${iso(e.created_at)}  expires ${iso(e.expires_at)}`;
}

runIfMain(import.meta.url, (argv, out, err) => run(argv, out, err));
