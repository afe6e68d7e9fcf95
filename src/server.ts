import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { updateOnFirstStart } from './data-update/first-start.js';
import { ConfigError, loadConfig, withSystemResolvers, type Config } from './config/config.js';
import { generateKey, keyIdOf, hashKey, MIN_KEY_LENGTH } from './keys/key.js';
import { createLogger } from './logger.js';
import { forPeople } from './log-for-people.js';
import { listenForMetrics, type MetricsListener } from './metrics/listener.js';

/** The only file that touches the process: environment, listening, signals. */

const DEV_KEY_FILE = '.dev-api-key';

/**
 * Outside production, a fresh clone with no keys (none in API_KEYS, none in the store) still
 * answers: a development key is made once, written to `.dev-api-key` (mode 0600, git-ignored), as
 * a key of the `default` account. Once made, it keeps serving at every start without API_KEYS,
 * keys made in the store since included, so the README's first curl keeps working. It never goes
 * to the log.
 */
function existingDevelopmentKey(): string | null {
  if (!existsSync(DEV_KEY_FILE)) return null;
  const key = readFileSync(DEV_KEY_FILE, 'utf8').trim();
  return key.length >= MIN_KEY_LENGTH ? key : null;
}

function newDevelopmentKey(): string {
  const key = generateKey();
  writeFileSync(DEV_KEY_FILE, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * Outside production, while no console user exists: the first owner's one-time setup link, on the
 * terminal (stderr), never in the JSON log on stdout. Printed once the service listens, so it is
 * the last thing a start prints, the link alone on its line, easy to copy. README "Administration".
 */
function printSetupLink(config: Config, token: string): void {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const base = `http://${host}:${config.port}`;
  process.stderr.write(
    '\nNo console user yet. Create the first instance owner (the link works once, for 24 hours; a restart replaces it).\n' +
      `With curl: curl -si ${base}/admin/v1/setup -H 'Content-Type: application/json' -d '{"token":"${token}","email":"you@example.com","password":"at least 12 characters"}'\n` +
      'Or open this link in a browser:\n\n' +
      `${base}/console/#setup=${token}\n\n`,
  );
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // A development start prints for a person (src/log-for-people.ts); production and test log JSON.
  const logger = createLogger(config.logLevel, config.env === 'development' ? forPeople() : undefined);
  config = withSystemResolvers(config);

  // NODE_ENV=production never uses one: a start with no key at all is refused there.
  const announce = (key: string) => {
    logger.warn({ key_id: keyIdOf(hashKey(key)), file: DEV_KEY_FILE }, `no API keys configured: using the development key in ${DEV_KEY_FILE} (never in production)`);
    return key;
  };
  let development: (() => string) | undefined;
  let developmentKeyFile: { file: string; key: string | null } | undefined;
  if (config.env !== 'production' && config.apiKeys.length === 0) {
    const existing = existingDevelopmentKey();
    if (existing !== null) config = { ...config, apiKeys: [announce(existing)] };
    else development = () => announce(newDevelopmentKey());
    developmentKeyFile = { file: DEV_KEY_FILE, key: existing };
  }

  // The setup token arrives while the app is built: its link is printed after the ready line.
  let listening = false;
  let setupToken: string | undefined;
  let app: FastifyInstance;
  try {
    app = await buildApp(config, { logger, developmentKey: development, developmentKeyFile, onSetupToken: (token) => (listening ? printSetupLink(config, token) : (setupToken = token)) });
  } catch (error) {
    logger.fatal({ error: (error as Error).message }, 'start-up failed');
    logger.flush();
    process.exit(1);
  }

  let stopping = false;
  let metricsListener: MetricsListener | undefined;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Not ready from now on, and every answer says `Connection: close`, so balancers that watch
    // /readyz stop routing here, and keep-alive connections are retired while requests are still
    // served. Then the drain: no new connections, in-flight requests finish (docs/operations.md "Rolling restarts").
    app.stopAccepting();
    if (config.shutdownDelayMs > 0) {
      logger.info({ signal, delay_ms: config.shutdownDelayMs }, 'shutting down: not ready, still serving until the delay ends');
      await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
    }
    logger.info({ signal, grace_ms: config.shutdownGraceMs }, 'shutting down: draining in-flight requests');
    // A request that outlives the grace period must not keep the process alive forever.
    const force = setTimeout(() => {
      logger.error('grace period over: exiting with requests still in flight');
      logger.flush();
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    try {
      await app.close();
      await metricsListener?.close();
      logger.info('stopped');
      logger.flush();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      logger.flush();
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    logger.fatal({ error: (error as Error).message, port: config.port, host: config.host }, 'cannot listen');
    await app.close();
    logger.flush();
    process.exit(1);
  }
  if (app.metrics !== null && config.metrics.port !== null) {
    try {
      metricsListener = await listenForMetrics({ metrics: app.metrics, host: config.metrics.host, port: config.metrics.port, token: config.metrics.token });
    } catch (error) {
      logger.fatal({ error: (error as Error).message, port: config.metrics.port, host: config.metrics.host }, 'cannot listen for metrics (METRICS_PORT, METRICS_HOST)');
      await app.close();
      logger.flush();
      process.exit(1);
    }
  }
  const metrics = metricsListener?.address ?? (config.metrics.token !== null ? 'on PORT, with the token' : 'off');
  const dnsServers = config.dnsServers.map((s) => `${s.host}:${s.port}`);
  if (config.env === 'development') {
    // For a person: where it listens and what is missing, not every source's record (GET /admin/v1/sources has them).
    const notLoaded = app.sources().filter((s) => !s.loaded).map((s) => s.name);
    logger.info({ url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`, metrics, dns_servers: dnsServers.join(', '), sources_not_loaded: notLoaded.join(', ') || 'none' }, 'ready');
  } else {
    logger.info({ address: app.server.address(), metrics, sources: app.sources(), dns_servers: dnsServers, node_env: config.env }, 'ready');
  }
  // In the background: the service serves on its bundled data meanwhile, and reloads the files as they land.
  void updateOnFirstStart(process.env, config.dataDir, logger);
  listening = true;
  if (setupToken !== undefined) printSetupLink(config, setupToken);
}

void main();
