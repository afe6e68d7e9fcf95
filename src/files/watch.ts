import { stat } from 'node:fs/promises';

/**
 * Calls `onChange(path)` when a file appears, disappears or changes (size, mtime or inode: tools such
 * as geoipupdate replace files by rename). Polls with `stat` rather than `fs.watch`, which misses
 * renames on some file systems and does not see bind-mounted ConfigMaps being swapped. Polling also
 * runs under fake timers, so tests control time instead of sleeping.
 */
export interface FileWatcher {
  /** Checks every path now; resolves when every triggered `onChange` has finished. */
  check(): Promise<void>;
  close(): void;
}

type Signature = string;

async function signatureOf(path: string): Promise<Signature> {
  try {
    const s = await stat(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return 'absent';
  }
}

export async function watchFiles(
  paths: string[],
  onChange: (path: string) => Promise<void> | void,
  intervalMs: number,
): Promise<FileWatcher> {
  const seen = new Map<string, Signature>();
  for (const path of paths) seen.set(path, await signatureOf(path));
  let running: Promise<void> | null = null;

  const checkOnce = async (): Promise<void> => {
    for (const path of paths) {
      const now = await signatureOf(path);
      if (now === seen.get(path)) continue;
      seen.set(path, now);
      try {
        await onChange(path);
      } catch {
        // The callback owns its error reporting; a watcher must keep watching.
      }
    }
  };
  const check = (): Promise<void> => {
    // One pass at a time: a slow reload must not overlap the next tick's.
    running ??= checkOnce().finally(() => {
      running = null;
    });
    return running;
  };

  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return { check, close: () => clearInterval(timer) };
}
