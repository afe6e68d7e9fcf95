import { useTempRoot } from './temp-root.js';

/**
 * One temporary directory for the whole run, removed when it ends. Test files make stores, data
 * and rule directories, PostgreSQL clusters and browser profiles under `os.tmpdir()`, and many
 * left them behind (after 12 hours of runs this machine's /tmp held 6,288 store directories, 4.4 GB,
 * and 4,693 data directories). Set by the first global setup, before the others' setup functions
 * run (vitest imports every global setup module first: none may read `os.tmpdir()` at its top level)
 * and before the test workers start, so they and their child processes inherit it; torn down last.
 */
export default function setup(): () => void {
  return useTempRoot('risk-test-run-').remove;
}
