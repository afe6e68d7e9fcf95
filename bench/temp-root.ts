import { useTempRoot } from '../test/support/temp-root.js';

/**
 * Imported first by every bench that writes under `os.tmpdir()`: its stores, data sets, logs and
 * PostgreSQL clusters go under one directory, removed when the bench ends. Before, each
 * `npm run bench` left ~2 GB in /tmp and each `bench/writer.ts` run ~220 MB a store.
 *
 * A bench that fails keeps it, for its services' logs, and says where; one stopped by a signal
 * (Ctrl-C) leaves it too (no handler here: a bench filling SQLite in one synchronous loop must still
 * stop at once). Either is removed when the next bench starts. What a bench keeps on purpose (CPU
 * profiles) goes under `keptTmpdir`, the temporary directory as it was, and the bench prints where.
 */
const { root, remove, outer } = useTempRoot('risk-bench-run-');
export const keptTmpdir = outer;
process.on('exit', (code) => {
  if (code === 0) remove();
  else process.stderr.write(`the bench's temporary files are kept in ${root} until the next bench starts\n`);
});
