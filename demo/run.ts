import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig, withSystemResolvers } from '../src/config/config.js';
import { generateKey } from '../src/keys/key.js';
import { createLogger } from '../src/logger.js';
import { SDK_DIST, sriOf } from '../scripts/build-sdk.js';
import { sdkVersion } from '../src/http/routes/sdk.js';
import { createDemoBackend } from './backend.js';

/**
 * `npm run demo`: the sign-up demo on loopback. With RISK_URL and RISK_API_KEY it uses that
 * service; otherwise it starts one here, from the same environment variables as `npm start`
 * (DATA_DIR, RULES_DIR, DNS_SERVERS…), with a key of its own. DEMO_PORT (4000) is the demo's port.
 */
const env = process.env;
const demoPort = Number(env.DEMO_PORT ?? 4000);

async function startService(): Promise<{ url: string; apiKey: string; close(): Promise<void> }> {
  if (env.RISK_URL && env.RISK_API_KEY) return { url: env.RISK_URL.replace(/\/$/, ''), apiKey: env.RISK_API_KEY, close: async () => {} };
  const apiKey = generateKey();
  // DNS_SERVERS unset (a fresh clone): the system's resolvers, as `npm start` does.
  const config = withSystemResolvers(loadConfig({ ...env, NODE_ENV: 'development', API_KEYS: apiKey, ACCOUNTS_FILE: undefined, HOST: '127.0.0.1', LOG_LEVEL: env.LOG_LEVEL ?? 'warn' }));
  const app = await buildApp(config, { logger: createLogger(config.logLevel) });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: address, apiKey, close: () => app.close() };
}

const service = await startService();
const demo = createDemoBackend({
  service,
  // The exact-version path, pinned by its integrity hash, as the README recommends.
  sdk: { path: `/sdk/v${sdkVersion()}/device.js`, integrity: sriOf(readFileSync(join(SDK_DIST, 'device.js'))) },
});
const url = await demo.listen({ host: '127.0.0.1', port: demoPort });
console.log(`risk service: ${service.url}\nsign-up demo: ${url}/  (Ctrl-C to stop)`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.all([demo.close(), service.close()]).then(() => process.exit(0));
  });
}
