import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Points TMPDIR at a new directory under the current one, so that everything this process and the
 * processes it starts make under `os.tmpdir()` (stores, data and rule directories, PostgreSQL
 * clusters, browser profiles) lands where one removal finds it. `remove` puts TMPDIR back and
 * deletes the directory; `outer` is the temporary directory before it, for what a caller keeps on
 * purpose. Readable by everyone, as /tmp is: a test PostgreSQL runs as another user.
 */
export function useTempRoot(prefix: string): { root: string; outer: string; remove: () => void } {
  const outer = tmpdir();
  const root = mkdtempSync(join(outer, prefix));
  chmodSync(root, 0o755);
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return {
    root,
    outer,
    remove: () => {
      if (process.env.TMPDIR === root) {
        if (previous === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = previous;
      }
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
