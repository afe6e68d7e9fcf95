import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Points TMPDIR at a new directory under the current one, so that everything this process and the
 * processes it starts make under `os.tmpdir()` (stores, data and rule directories, PostgreSQL
 * clusters, browser profiles) lands where one removal finds it. `remove` puts TMPDIR back and
 * deletes the directory; `outer` is the temporary directory before it, for what a caller keeps on
 * purpose. Readable by everyone, as /tmp is: a test PostgreSQL runs as another user.
 *
 * The directory is named with this process's id: a run that never got to `remove` (killed, Ctrl-C)
 * leaves one, and the next run with the same prefix removes it once that process is gone.
 */
export function useTempRoot(prefix: string): { root: string; outer: string; remove: () => void } {
  const outer = tmpdir();
  sweepAbandoned(outer, prefix);
  const root = mkdtempSync(join(outer, `${prefix}${process.pid}-`));
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
      removeQuietly(root);
    },
  };
}

/** `prefix<pid>-…` directories whose process has ended. */
function sweepAbandoned(outer: string, prefix: string): void {
  for (const name of readdirSync(outer)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) removeQuietly(join(outer, name));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A removal that fails (a child still writing into it) says what it left rather than throwing. */
function removeQuietly(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    process.stderr.write(`left ${dir} behind: ${(error as Error).message}\n`);
  }
}
