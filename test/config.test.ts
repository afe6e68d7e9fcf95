import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDnsServer } from '../src/config/config.js';

describe('configuration', () => {
  it('has embedded defaults for everything', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '0.0.0.0', logLevel: 'info', dataDir: './data', rulesDir: './rules', dnsServers: [], trustProxy: [] });
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '' }).port).toBe(3000);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['DNS_SERVERS', '8.8.8.8,not-an-ip'],
    ['DNS_TIMEOUT_MS', '-5'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '0.0.0.0/0'],
    ['TRUST_PROXY', '::/0'],
    ['NODE_ENV', 'staging'],
    ['METRICS_PORT', '0'],
    ['METRICS_TOKEN', 'too-short'],
    ['METRICS_TOKEN', 'a token with spaces that is long enough to pass'],
    ['SHUTDOWN_DELAY_MS', '-1'],
  ])('names %s when its value %s is bad', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join('\n')).toMatch(new RegExp(`^${name}: `, 'm'));
  });

  it('metrics are off unless there is somewhere to scrape them; their host and port must make sense', () => {
    expect(loadConfig({}).metrics).toEqual({ enabled: false, port: null, host: '127.0.0.1', token: null });
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ enabled: true, port: 9464, host: '127.0.0.1', token: null });
    const token = 'a'.repeat(32);
    expect(loadConfig({ METRICS_TOKEN: token }).metrics).toEqual({ enabled: true, port: null, host: '127.0.0.1', token });
    expect(() => loadConfig({ METRICS_HOST: '0.0.0.0' })).toThrow(/METRICS_HOST: has no effect without METRICS_PORT/);
    expect(() => loadConfig({ PORT: '9464', METRICS_PORT: '9464' })).toThrow(/METRICS_PORT: must differ from PORT/);
  });

  it('reports every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', HOST: '', LOG_LEVEL: 'y' })).toThrow(/PORT[\s\S]*LOG_LEVEL/);
  });

  it.each([
    ['127.0.0.1', { host: '127.0.0.1', port: 53 }],
    ['127.0.0.1:5353', { host: '127.0.0.1', port: 5353 }],
    ['::1', { host: '::1', port: 53 }],
    ['[::1]:5353', { host: '::1', port: 5353 }],
    ['localhost:53', null],
    ['127.0.0.1:0', null],
  ])('parses DNS server %s', (value, expected) => {
    expect(parseDnsServer(value)).toEqual(expected);
  });

  it('stops the real server with the variable named and exit code 1', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { PATH: process.env.PATH, PORT: 'not-a-port', DNS_SERVERS: '127.0.0.1:9' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/PORT: /);
  });
});
