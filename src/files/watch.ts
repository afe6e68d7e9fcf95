import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

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
  return poll(
    paths.map((path) => ({ key: path, signature: () => signatureOf(path) })),
    onChange,
    intervalMs,
  );
}

/**
 * Calls `onChange(dir)` when a file whose name passes `include` appears in `dir`, disappears, or
 * changes; also when the directory itself appears or disappears. Renaming a file in counts.
 */
export async function watchDirectory(
  dir: string,
  include: (name: string) => boolean,
  onChange: (dir: string) => Promise<void> | void,
  intervalMs: number,
): Promise<FileWatcher> {
  return poll([{ key: dir, signature: () => directorySignature(dir, include) }], onChange, intervalMs);
}

async function directorySignature(dir: string, include: (name: string) => boolean): Promise<Signature> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter(include).sort();
  } catch {
    return 'absent';
  }
  const parts = await Promise.all(names.map(async (name) => `${name}=${await signatureOf(join(dir, name))}`));
  return parts.join('/');
}

interface Target {
  key: string;
  signature: () => Promise<Signature>;
}

async function poll(
  targets: Target[],
  onChange: (key: string) => Promise<void> | void,
  intervalMs: number,
): Promise<FileWatcher> {
  const seen = new Map<string, Signature>();
  for (const target of targets) seen.set(target.key, await target.signature());
  let running: Promise<void> | null = null;

  const checkOnce = async (): Promise<void> => {
    for (const target of targets) {
      const now = await target.signature();
      const before = seen.get(target.key);
      if (now === before) continue;
      seen.set(target.key, now);
      try {
        await onChange(target.key);
      } catch {
        // The callback owns its error reporting; a watcher keeps watching, and a change whose
        // handling failed is handled again at the next pass instead of being taken as seen.
        seen.set(target.key, before!);
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
