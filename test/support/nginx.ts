import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort } from './process.js';

/**
 * Debian's nginx (`apt-get install nginx`, /usr/sbin/nginx) running `deploy/nginx.conf` itself, as
 * the current user, on a free loopback port, with its pid, logs and temporary files in a temporary
 * directory. Only the user, the listen port, the replicas' addresses and those paths are replaced:
 * every other line (retries, keep-alive, failure marking, log format) is the deployed one.
 */
export const NGINX = '/usr/sbin/nginx';
const DEPLOYED_CONFIG = 'deploy/nginx.conf';

/** One line of the access log, as `log_format risk` writes it. */
export interface AccessLogEntry {
  time: string;
  request_id: string;
  method: string;
  status: number;
  request_time: number;
  /** `127.0.0.1:1234`, or `a, b` when nginx tried a second replica. */
  upstream: string;
  upstream_status: string;
}

export interface Nginx {
  url: string;
  port: number;
  /** The TLS server's origin, when started with a certificate. */
  tlsUrl?: string;
  /** Every access log line so far. */
  accessLog(): AccessLogEntry[];
  /** The error log so far: why nginx gave up on a replica (`connect() failed (111: Connection refused)`, `reset by peer`...). */
  errorLog(): string;
  stop(): Promise<void>;
}

/** A certificate and key on disk, and the loopback port the TLS server listens on. */
export interface TlsOptions {
  port: number;
  cert: string;
  key: string;
}

const DEPLOYED_TLS_CONFIG = 'deploy/nginx-tls.conf';
const TLS_INCLUDE = 'include /etc/nginx/risk.d/*.conf;';

/** Each `[from, to]` in `text`, where `from` must appear exactly once. */
function replaceOnce(file: string, text: string, replacements: Array<[string, string]>): string {
  for (const [from, to] of replacements) {
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`${file}: "${from.trim()}" appears ${count} times; the test replaces it exactly once`);
    text = text.replace(from, to);
  }
  return text;
}

/**
 * `deploy/nginx.conf` with this machine's user, ports and paths: each replaced line must be there
 * exactly once. With `tls`, `deploy/nginx-tls.conf` takes the place of the include that
 * deploy/compose.tls.yaml fills, with its port and certificate paths replaced.
 */
export function nginxConfig(options: { dir: string; port: number; replicas: number[]; tls?: TlsOptions }): string {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(options.dir, kind)};`).join('\n');
  const replacements: Array<[string, string]> = [
    ['user nginx;', `user ${userInfo().username};`],
    ['pid /var/run/nginx.pid;', `pid ${join(options.dir, 'nginx.pid')};`],
    ['error_log /var/log/nginx/error.log warn;', `error_log ${join(options.dir, 'error.log')} warn;`],
    ['access_log /var/log/nginx/access.log risk;', `access_log ${join(options.dir, 'access.log')} risk;`],
    ['listen 8080;', `listen 127.0.0.1:${options.port};`],
    ['server risk-1:3000 ', `server 127.0.0.1:${options.replicas[0]} `],
    ['server risk-2:3000 ', `server 127.0.0.1:${options.replicas[1]} `],
    ['http {\n', `http {\n${temp}\n`],
  ];
  if (options.tls) {
    const server = replaceOnce(DEPLOYED_TLS_CONFIG, readFileSync(DEPLOYED_TLS_CONFIG, 'utf8'), [
      ['listen 443 ssl;', `listen 127.0.0.1:${options.tls.port} ssl;`],
      ['ssl_certificate /etc/nginx/tls/cert.pem;', `ssl_certificate ${options.tls.cert};`],
      ['ssl_certificate_key /etc/nginx/tls/key.pem;', `ssl_certificate_key ${options.tls.key};`],
    ]);
    replacements.push([TLS_INCLUDE, server]);
  }
  return replaceOnce(DEPLOYED_CONFIG, readFileSync(DEPLOYED_CONFIG, 'utf8'), replacements);
}

export async function startNginx(replicas: number[], options: { tls?: Omit<TlsOptions, 'port'> } = {}): Promise<Nginx> {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: apt-get install nginx`);
  const dir = mkdtempSync(join(tmpdir(), 'risk-nginx-'));
  const port = await freePort();
  const tls = options.tls && { ...options.tls, port: await freePort() };
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig({ dir, port, replicas, tls }));

  // In the foreground: the child is the master, its exit is nginx's exit.
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  await expect
    .poll(
      async () => {
        if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}):\n${output}${readIfThere(join(dir, 'error.log'))}`);
        return fetch(`${url}/healthz`).then((r) => r.status, () => 0);
      },
      { timeout: 15_000, interval: 50 },
    )
    .toBe(200);

  const accessLog = join(dir, 'access.log');
  return {
    url,
    port,
    tlsUrl: tls && `https://127.0.0.1:${tls.port}`,
    accessLog: () =>
      readIfThere(accessLog)
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as AccessLogEntry),
    errorLog: () => readIfThere(join(dir, 'error.log')),
    async stop() {
      if (child.exitCode !== null) return;
      // SIGQUIT: nginx's graceful stop (workers finish what they hold).
      child.kill('SIGQUIT');
      await exited;
    },
  };
}

function readIfThere(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
