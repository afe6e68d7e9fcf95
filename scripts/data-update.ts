import { runDataUpdate } from './data-update/run.js';
import { settingsFrom, SettingsError } from './data-update/settings.js';

/**
 * `npm run data:update`: downloads the Tor exit list, the public cloud ranges and (with a MaxMind
 * account) GeoLite2 City and ASN into DATA_DIR, each validated then renamed into place. One failing
 * source does not stop the others; the exit code is 1 when any failed. See docs/data.md.
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
  console.log(`data:update into ${settings.dataDir}`);
  const report = await runDataUpdate(settings);
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
