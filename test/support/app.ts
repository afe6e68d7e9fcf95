import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppResources, type BuildOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { generateKey } from '../../src/keys/key.js';
import { createLogger } from '../../src/logger.js';

/** Log lines the app wrote, parsed: tests assert on fields, not on text. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  readonly raw: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      this.raw.push(line);
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }
}

export const KEY_A = generateKey();
export const KEY_B = generateKey();

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  logs: LogCapture;
}

/**
 * The real app, built by the production factory from a config parsed by the production schema,
 * with a store of its own (a SQLite file in a new temporary directory, unless `DATABASE_URL` is
 * given). DNS goes to a closed port on 127.0.0.1 unless a test starts its own server: never to
 * the machine's resolver.
 */
export async function startTestApp(env: Record<string, string> = {}, resources: Partial<AppResources> = {}, options: Omit<BuildOptions, 'logger' | 'resources'> = {}): Promise<TestApp> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    API_KEYS: `${KEY_A},${KEY_B}`,
    RULES_DIR: 'rules',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'risk-data-')),
    DNS_SERVERS: '127.0.0.1:9',
    DNS_TIMEOUT_MS: '200',
    RATE_LIMIT_MAX: '0',
    DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'risk-store-')), 'risk.sqlite')}`,
    ...env,
  });
  const logs = new LogCapture();
  const app = await buildApp(config, { ...options, logger: createLogger(config.logLevel, logs), resources });
  return { app, config, logs };
}

export const evaluationBody = (overrides: Record<string, unknown> = {}) => ({
  ip: '81.2.69.160',
  email: 'jane.doe@example.com',
  event_type: 'account_register',
  ...overrides,
});

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
