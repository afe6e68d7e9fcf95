import { pino } from 'pino';
import { loadConfig } from '../config/config.js';
import { LATEST_VERSION } from '../store/migrations/index.js';
import { openStore } from '../store/index.js';

/**
 * `npm run db:migrate`: brings the store named by DATABASE_URL to this version's schema and says
 * what it did. The service does the same at every start (under the same lock); this is for a
 * deployment that migrates before it rolls out.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const store = await openStore({ database: config.database, logger: pino({ level: 'warn' }, pino.destination(2)), retentionDays: 0, writeLog: false });
  const { from, to, applied } = store.migration;
  await store.close();
  if (applied.length === 0) console.log(`${config.database.display}: at schema version ${to} of ${LATEST_VERSION}, nothing to do`);
  else console.log(`${config.database.display}: migrated from schema version ${from} to ${to}:\n${applied.map((a) => `  ${a}`).join('\n')}`);
}

main().catch((error: Error) => {
  process.stderr.write(`error: ${error.message}\n`);
  process.exit(1);
});
