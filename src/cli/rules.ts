import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../config/config.js';
import { DEFAULT_ACCOUNT } from '../store/accounts.js';
import { cliActor, fail, runIfMain } from './common.js';
import { openStore, type Store } from '../store/index.js';
import { readRuleFiles } from '../rules/templates.js';
import { BACKTEST_OPTIONS, BACKTEST_USAGE, backtestArguments, backtestCommand, backtestFiles } from './backtest.js';

/**
 * `npm run rules -- <command>`: rule sets in the store, with YAML files as the exchange format.
 * `apply` validates every file the way the service does (file, line, path) and publishes those
 * that changed, all or none; every running replica serves them within RELOAD_INTERVAL_MS.
 */
const usage = `Usage: npm run rules -- <command> [options]

  apply DIR [--comment TEXT]          publishes each <event_type>.yaml in DIR whose text differs from the live version
  export [DIR]                        writes the live version of each event type to DIR (default: prints them)
  versions [--event-type TYPE]        every version: number, status, author, time, comment
  rollback --event-type TYPE --version N   publishes an earlier version's text again, as a new version
${BACKTEST_USAGE}

  --account ID   the account (default: "default", the account of API_KEYS)

The store is DATABASE_URL's (default sqlite:./var/risk.sqlite). To check files without a store:
npm run rules:check [DIR].`;


export async function run(argv: string[], out: (line: string) => void, err: (line: string) => void, env: Record<string, string | undefined> = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { account: { type: 'string' }, comment: { type: 'string' }, 'event-type': { type: 'string' }, version: { type: 'string' }, ...BACKTEST_OPTIONS },
    });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${usage}`);
  }
  const { positionals, values } = parsed;
  const command = positionals[0];
  if (command === undefined || command === 'help' || !['apply', 'export', 'versions', 'rollback', 'backtest'].includes(command)) {
    err(usage);
    return command === undefined || command === 'help' ? 0 : 2;
  }
  const config = loadConfig(env);
  const account = values.account ?? DEFAULT_ACCOUNT;
  // Files are read and validated before the store is opened: a typo costs no connection.
  const backtest = command === 'backtest' ? backtestArguments(values, Date.now()) : null;
  const dir = command === 'apply' || command === 'backtest' ? positionals[1] ?? fail(`${command} needs a directory: npm run rules -- ${command} DIR`) : null;
  const read = dir === null ? [] : await readRuleFiles(dir);
  const files = command === 'backtest' ? backtestFiles(read, dir!, values['event-type']) : read;
  const store = await openStore({ database: config.database, logger: pino({ level: 'warn' }, pino.destination(2)), retentionDays: 0, writeLog: false });
  try {
    if (backtest !== null) {
      return await backtestCommand(store, { account, dir: dir!, files, ...backtest, json: values.json ?? false }, out, err);
    }
    return await execute(command, { store, account, positionals, values, files, out, err });
  } finally {
    await store.close();
  }
}

interface Context {
  store: Store;
  account: string;
  positionals: string[];
  values: { comment?: string; 'event-type'?: string; version?: string };
  files: Awaited<ReturnType<typeof readRuleFiles>>;
  out: (line: string) => void;
  err: (line: string) => void;
}

async function execute(command: string, { store, account, positionals, values, files, out, err }: Context): Promise<number> {
  const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());
  switch (command) {
    case 'apply': {
      const results = await store.ruleSets.apply(account, files, { actor: cliActor(), comment: values.comment ?? null });
      for (const r of results) out(`${r.eventType}: ${r.outcome === 'published' ? `published as version ${r.version}` : `unchanged (version ${r.version})`}`);
      return 0;
    }
    case 'export': {
      const live = await store.ruleSets.published(account);
      const dir = positionals[1];
      if (dir !== undefined) mkdirSync(dir, { recursive: true });
      for (const version of live) {
        if (dir === undefined) {
          out(`# ${version.event_type}.yaml: account ${account}, version ${version.version}\n${version.yaml}`);
        } else {
          writeFileSync(join(dir, `${version.event_type}.yaml`), version.yaml);
          err(`wrote ${join(dir, `${version.event_type}.yaml`)} (version ${version.version})`);
        }
      }
      return 0;
    }
    case 'versions': {
      for (const v of await store.ruleSets.list(account, values['event-type'])) {
        out(`${v.event_type}  v${v.version}  ${v.status.padEnd(9)}  ${v.author}  created ${iso(v.created_at)}  published ${iso(v.published_at)}${v.comment ? `  "${v.comment}"` : ''}`);
      }
      return 0;
    }
    case 'rollback': {
      const eventType = values['event-type'] ?? fail('--event-type is required');
      const version = Number(values.version ?? fail('--version is required'));
      if (!Number.isInteger(version) || version < 1) fail('--version must be a version number (see "versions")');
      const created = await store.ruleSets.rollback(account, eventType, version, { actor: cliActor(), comment: values.comment ?? null });
      out(`${eventType}: version ${version} published again as version ${created.version}`);
      return 0;
    }
    default:
      return fail(usage);
  }
}

runIfMain(import.meta.url, (argv, out, err) => run(argv, out, err));
