import { useTempRoot } from '../test/support/temp-root.js';

/**
 * Imported first by every bench that writes under `os.tmpdir()`: its stores, data sets, logs and
 * PostgreSQL clusters go under one directory, removed when the bench exits, on an error or on
 * Ctrl-C too. Before, each `npm run bench` left ~2 GB in /tmp and each `bench/writer.ts` run
 * ~220 MB per store. What a bench keeps on purpose (CPU profiles) goes under `keptTmpdir`, the
 * temporary directory as it was, and the bench prints where.
 */
const { remove, outer } = useTempRoot('risk-bench-run-');
export const keptTmpdir = outer;
process.on('exit', remove);
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) process.once(signal, () => process.exit(code));
