import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { IpInspector } from './facts.js';
import { watchFiles } from '../files/watch.js';
import { factsOf } from './lookup.js';
import { bundledOpenData, type OpenDataFiles } from './open-data.js';
import { WrongTypeError } from './records.js';
import { createSources, dataDirSources, type IpSources } from './sources.js';

export interface IpInspectorOptions {
  config: Config;
  logger: Logger;
  /**
   * The open data fallback: `undefined` for the bundled npm packages, `null` to go without
   * (tests; deployments that want MaxMind only), or other files in the same formats.
   */
  openData?: OpenDataFiles | null;
}

export interface ReloadingIpInspector extends IpInspector {
  /**
   * Checks `DATA_DIR` now and reloads what changed (the watcher does this every `reloadIntervalMs`);
   * resolves once every change seen at the time of the call is loaded or refused. For a SIGHUP handler or tests.
   */
  reload(): Promise<void>;
}

/**
 * Loads every IP data source found (each optional), logs its provenance, then watches `DATA_DIR`:
 * a changed file is loaded, checked and swapped in, or refused while the last good copy serves.
 */
export async function createIpInspector(options: IpInspectorOptions): Promise<ReloadingIpInspector> {
  const logger = options.logger.child({ component: 'ip' });
  const openData = options.openData === undefined ? await bundledOpenData() : options.openData;
  if (openData === null && options.openData === undefined) {
    logger.warn('bundled open IP data (@ip-location-db) not found: country and ASN need MaxMind files');
  }
  const sources = createSources(options.config.dataDir, openData, logger);
  const files = dataDirSources(sources);
  await Promise.all(files.map((s) => s.reload()));
  await loadOpenDataWhereNeeded(sources);
  const status = () => [...files, sources.openCountry, sources.openAsn].flatMap((s) => (s ? [s.status()] : []));
  logger.info({ sources: status() }, 'ip data sources');

  const errors = new Set<string>();
  const onLookupError = (source: string, error: unknown) => {
    // Once per source until it reloads: a reader that fails on one address likely fails on many.
    if (errors.has(source)) return;
    errors.add(source);
    const message = error instanceof WrongTypeError
      ? `ip data of the wrong type in ${source}: the value is unknown, its check unavailable`
      : `ip look-up failed in ${source}: answering without it`;
    logger.error({ source, err: (error as Error).message }, message);
  };

  const watcher = await watchFiles(
    files.flatMap((s) => s.files),
    async (path) => {
      for (const source of files.filter((s) => s.files.includes(path))) await source.reload();
      await loadOpenDataWhereNeeded(sources);
      errors.clear();
    },
    options.config.reloadIntervalMs,
  );

  return {
    inspect: (ip) =>
      factsOf(
        ip,
        {
          city: sources.city.current,
          asn: sources.asn.current,
          anonymous: sources.anonymous.current,
          tor: sources.tor.current,
          datacenter: sources.datacenter.current,
          proxy: sources.proxy.current,
          vpn: sources.vpn.current,
          openCountry: sources.openCountry?.current ?? null,
          openAsn: sources.openAsn?.current ?? null,
        },
        onLookupError,
      ),
    status,
    // A pass already running may have looked at the files before the caller changed them: let it
    // finish, then look again.
    reload: () => watcher.check().then(() => watcher.check()),
    close: async () => {
      watcher.close();
      for (const source of [...files, sources.openCountry, sources.openAsn]) source?.close();
    },
  };
}

/**
 * The open data is loaded only for what no MaxMind file covers: with both City and ASN databases in
 * `DATA_DIR` it costs neither start-up time nor memory. Once loaded it stays, ready for a MaxMind
 * file that is removed or is IPv4-only.
 */
async function loadOpenDataWhereNeeded(sources: IpSources): Promise<void> {
  const needed = [
    sources.city.current === null || sources.city.current.ipVersion === 4 ? sources.openCountry : null,
    sources.asn.current === null || sources.asn.current.ipVersion === 4 ? sources.openAsn : null,
  ];
  await Promise.all(needed.map((s) => (s && s.current === null ? s.reload() : undefined)));
}
