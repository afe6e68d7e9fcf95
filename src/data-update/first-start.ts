import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createDownload, proxyAgent } from './fetch.js';
import { runDataUpdate, type UpdateReport } from './run.js';
import { settingsFrom } from './settings.js';

/** Written to DATA_DIR once a first-start run updated something: later starts leave it to the schedule. */
export const FIRST_RUN_MARKER = '.data-update-first-run';

type Env = Record<string, string | undefined>;

/**
 * `DATA_UPDATE_ON_START=true` (the Docker image sets it): the data job, run once in the
 * background at the first start with a DATA_DIR it has not filled yet, so Tor, open proxies, VPN
 * servers, the cloud ranges and fresh throw-away domain lists are there without a schedule. The sources are the job's own
 * (`DATA_UPDATE_*`, docs/data.md). Where nothing could be fetched, a plain notice says so and the
 * service runs on its bundled data; the next start tries again. Never throws: serving does not
 * depend on it. Returns the report, or `null` when it did not run.
 */
export async function updateOnFirstStart(env: Env, dataDir: string, logger: Logger): Promise<UpdateReport | null> {
  if (env.DATA_UPDATE_ON_START?.trim() !== 'true') return null;
  const marker = join(dataDir, FIRST_RUN_MARKER);
  if (await access(marker).then(() => true, () => false)) return null;
  let report: UpdateReport;
  try {
    const settings = settingsFrom({ ...env, DATA_DIR: dataDir });
    const dispatcher = proxyAgent(settings.proxy);
    try {
      // One try per source: a start-up without the internet should say so soon, not after back-offs.
      report = await runDataUpdate(settings, { download: createDownload({ timeoutMs: settings.timeoutMs, attempts: 1, retryDelayMs: 0, dispatcher }) });
    } finally {
      await dispatcher.close();
    }
  } catch (error) {
    logger.warn({ err: (error as Error).message }, 'data job at first start: not run (DATA_UPDATE_* settings); run npm run data:update once they are fixed');
    return null;
  }
  const updated = report.results.filter((r) => r.outcome === 'updated');
  const failed = report.results.filter((r) => r.outcome === 'failed');
  if (updated.length === 0) {
    logger.warn(
      { failed: failed.map((r) => `${r.source}: ${r.detail}`).slice(0, 5) },
      'data job at first start: no source could be fetched (is the internet reachable from here?). The service runs on its bundled data; run `npm run data:update` where the internet is reachable, or schedule it (docs/data.md). The next start tries again.',
    );
    return report;
  }
  logger.info({ updated: updated.map((r) => r.source), failed: failed.map((r) => `${r.source}: ${r.detail}`) }, `data job at first start: ${updated.length} sources updated, ${failed.length} failed`);
  await writeFile(marker, `${new Date().toISOString()}\n`).catch((error: Error) => logger.warn({ err: error.message }, `could not write ${marker}: the data job will run again at the next start`));
  return report;
}
