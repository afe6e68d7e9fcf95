import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { expect } from 'vitest';

/**
 * The service as production runs it: its own process from `src/server.ts`, configured by the
 * environment, listening on 127.0.0.1. Tests wait on its log (`ready`) and its exit, never on time.
 */
export interface ServiceProcess {
  url: string;
  port: number;
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** SIGTERM, then the exit code; SIGKILL if it is still running after `graceMs` more. */
  stop(graceMs?: number): Promise<number | string>;
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts `src/server.ts` with `env` on top of a test baseline (a free PORT, temporary DATA_DIR and store, DNS to a closed port, no rate limit). */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  // A given PORT is kept: a replica restarted where its load balancer expects it.
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'risk-data-')),
      // Its own store: the default (./var/risk.sqlite) would carry history and keys from one test to the next.
      DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'risk-store-')), 'risk.sqlite')}`,
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '200',
      RATE_LIMIT_MAX: '0',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  const died = exited.then((code) => {
    throw new Error(`the service exited (${code}) before it was ready:\n${output}`);
  });
  died.catch(() => undefined);
  // Generous: a start on a busy 2-core runner (TypeScript compiled on the fly) has taken over 20 s.
  await Promise.race([expect.poll(() => output.includes('"msg":"ready"'), { timeout: 60_000, interval: 50 }).toBe(true), died]);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output: () => output,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
