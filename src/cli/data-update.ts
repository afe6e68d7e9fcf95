import { createDownload, proxyAgent } from '../data-update/fetch.js';
import { redactUrls } from '../data-update/redact.js';
import { runDataUpdate } from '../data-update/run.js';
import { describeProxy, settingsFrom, SettingsError } from '../data-update/settings.js';

/**
 * `npm run data:update`, or `node dist/cli/data-update.js` where npm is not wanted (the Docker
 * image holds only the built code and production dependencies: this is all it needs). Downloads
 * the Tor exit list, the public cloud ranges and (with a MaxMind account) GeoLite2 City and ASN
 * into DATA_DIR, each validated then renamed into place, through HTTPS_PROXY/HTTP_PROXY unless
 * NO_PROXY says otherwise, retrying what may succeed later. One failing source does not stop the
 * others; the exit code is 1 when any failed, 2 on bad settings. See docs/data.md.
 */
async function main(): Promise<number> {
  let settings;
  try {
    settings = settingsFrom(process.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`data:update: ${error.message}`);
      return 2;
    }
    throw error;
  }
  console.log(`data:update into ${settings.dataDir} (${describeProxy(settings.proxy)}; ${settings.attempts} attempts per download)`);
  const dispatcher = proxyAgent(settings.proxy);
  const download = createDownload({
    timeoutMs: settings.timeoutMs,
    attempts: settings.attempts,
    retryDelayMs: settings.retryDelayMs,
    dispatcher,
    onRetry: (message) => console.log(`  retry    ${redactUrls(message)}`),
  });
  let report;
  try {
    report = await runDataUpdate(settings, { download });
  } finally {
    await dispatcher.close();
  }
  for (const r of report.results) {
    console.log(`  ${r.outcome.padEnd(8)} ${r.source.padEnd(24)} ${r.file.padEnd(24)} ${r.detail}`);
  }
  const count = (o: string) => report.results.filter((r) => r.outcome === o).length;
  const written = [...new Set(report.results.filter((r) => r.outcome === 'updated').map((r) => r.file))];
  console.log(`${count('updated')} updated, ${count('failed')} failed, ${count('skipped')} skipped`);
  console.log(`files replaced: ${written.length > 0 ? written.join(', ') : 'none'}`);
  return report.exitCode;
}

process.exitCode = await main();
