import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatForPeople } from '../../src/log-for-people.js';
import { startServiceProcess, freePort, type ServiceProcess } from '../support/process.js';
import { KEY_A } from '../support/app.js';

/**
 * What a start prints. A development start (NODE_ENV=development, the default) prints for a person:
 * readable lines, and the first owner's setup link last, alone on its line. Production and test
 * starts log JSON lines.
 */

// A start compiles TypeScript on the fly: seconds on a loaded 2-core runner.
vi.setConfig({ testTimeout: 90_000 });

const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

const storeUrl = () => `sqlite:${join(mkdtempSync(join(tmpdir(), 'risk-store-')), 'risk.sqlite')}`;

describe('a development start', () => {
  it('prints readable lines, and the setup link last, alone on its line', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(port),
        // A key given, so no .dev-api-key is written into the checkout.
        API_KEYS: KEY_A,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'risk-data-')),
        DATABASE_URL: storeUrl(),
        DNS_SERVERS: '127.0.0.1:9',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stops.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    await expect.poll(() => /\/console\/#setup=\S+\n\n$/.test(output), { timeout: 60_000, interval: 100 }).toBe(true);

    const lines = output.split('\n').filter((line) => line !== '');
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(lines.find((line) => line.includes('ready'))).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  INFO   ready  url=http://127\\.0\\.0\\.1:${port}  .*sources_not_loaded=`));
    expect(lines.at(-1)).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/console/#setup=[\\w-]+$`));
    expect(lines.at(-2)).toBe('Or open this link in a browser:');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  });
});

describe('a test start', () => {
  it('logs JSON lines, the ready line with every source', async () => {
    const service: ServiceProcess = await startServiceProcess({ API_KEYS: KEY_A });
    stops.push(() => service.stop());
    const ready = service.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === 'ready');
    expect(ready).toMatchObject({ level: 'info', sources: expect.any(Array), node_env: 'test' });
  });
});

describe('formatForPeople', () => {
  it('writes a JSON log line as one line: time, level, message, then every other field', () => {
    const line = JSON.stringify({ level: 'warn', time: '2026-11-26T20:51:07.123Z', service: 'risk-evaluation', msg: 'no API keys configured', key_id: 'k1', file: '.dev-api-key', req: { method: 'GET' } });
    expect(formatForPeople(line)).toBe('20:51:07  WARN   no API keys configured  key_id=k1  file=.dev-api-key  req={"method":"GET"}\n');
    expect(formatForPeople('not json')).toBe('not json');
  });
});
