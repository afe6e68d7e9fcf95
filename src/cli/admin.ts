import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { cliActor, fail, runIfMain } from './common.js';
import { loadConfig } from '../config/config.js';
import { openStore, type Store } from '../store/index.js';
import { hashPassword, oneTimePassword } from '../admin/password.js';

/**
 * `npm run admin -- <command>`: console users in the store (DATABASE_URL), for the first owner and
 * for recovering access. A password it makes is printed once, on stdout, and must be changed at the
 * first login; nothing else is allowed with it. Never logged.
 */
const usage = `Usage: npm run admin -- <command> [options]

  create --email ADDRESS [--owner] [--account ID --role admin|analyst]
                                  a console user with a one-time password, printed once (changed at first login)
  reset-password --email ADDRESS  a new one-time password, printed once; the user's sessions end
  list                            users: id, e-mail address, owner, status, roles

The store is DATABASE_URL's (default sqlite:./var/risk.sqlite). The first user should be --owner:
owners manage accounts and users, and act as admin in every account.`;

export async function run(argv: string[], out: (line: string) => void, err: (line: string) => void, env: Record<string, string | undefined> = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { email: { type: 'string' }, owner: { type: 'boolean' }, account: { type: 'string' }, role: { type: 'string' } } });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${usage}`);
  }
  const { positionals, values } = parsed;
  const command = positionals[0];
  if (command === undefined || command === 'help' || !['create', 'reset-password', 'list'].includes(command)) {
    err(usage);
    return command === undefined || command === 'help' ? 0 : 2;
  }
  if (values.role !== undefined && values.role !== 'admin' && values.role !== 'analyst') fail('--role is admin or analyst');
  if ((values.account === undefined) !== (values.role === undefined)) fail('--account and --role go together');
  const config = loadConfig(env);
  const store = await openStore({ database: config.database, logger: pino({ level: 'warn' }, pino.destination(2)), retentionDays: 0, writeLog: false });
  try {
    return await execute(command, values, store, out, err, config.database.display);
  } finally {
    await store.close();
  }
}

async function execute(command: string, values: { email?: string; owner?: boolean; account?: string; role?: string }, store: Store, out: (line: string) => void, err: (line: string) => void, where: string): Promise<number> {
  const email = () => values.email ?? fail('--email is required');
  switch (command) {
    case 'create': {
      const password = oneTimePassword();
      const membership = values.account !== undefined ? { account: values.account, role: values.role as 'admin' | 'analyst' } : undefined;
      const user = await store.users.create({ email: email(), passwordHash: await hashPassword(password), owner: values.owner === true, passwordChangeRequired: true, membership }, cliActor());
      const what = [user.owner ? 'instance owner' : null, membership ? `${membership.role} of "${membership.account}"` : null].filter(Boolean).join(', ') || 'no account yet';
      err(`Created ${user.id} <${user.email}> (${what}) in ${where}. Its one-time password follows: log in with it (POST /admin/v1/session or the console) and choose a new one; it allows nothing else.`);
      out(password);
      return 0;
    }
    case 'reset-password': {
      const user = (await store.users.byEmail(email())) ?? fail(`no user with the e-mail address ${values.email}`);
      const password = oneTimePassword();
      await store.users.setPassword(user.id, await hashPassword(password), true, { actor: cliActor() });
      err(`New one-time password for ${user.id} <${user.email}>; their sessions have ended. It must be changed at the next login.`);
      out(password);
      return 0;
    }
    case 'list': {
      for (const u of await store.users.list()) {
        const roles = u.memberships.map((m) => `${m.account_id}:${m.role}`).join(' ') || '-';
        out(`${u.id}  ${u.email}  ${u.owner ? 'owner' : 'member'}  ${u.status}${u.password_change_required ? '  (one-time password)' : ''}  ${roles}`);
      }
      return 0;
    }
    default:
      return fail(usage);
  }
}

runIfMain(import.meta.url, (argv, out, err) => run(argv, out, err));
