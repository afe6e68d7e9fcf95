import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';

/**
 * The files of issue 11 that `stat` cannot bound, with the reason the bounded reader gives for
 * each: a device that never ends, a FIFO that blocks whoever opens it, a sparse file whose size
 * is mostly holes (600 MiB, above every cap), a directory.
 */
export const HOSTILE_FILES = [
  ['a symlink to /dev/zero', /not a regular file \(a character device\)/],
  ['a FIFO nobody writes to', /not a regular file \(a FIFO\)/],
  ['a 600 MiB sparse file', /larger than \d+ bytes/],
  ['a directory', /not a regular file \(a directory\)/],
] as const;

export type HostileKind = (typeof HOSTILE_FILES)[number][0];

/** Makes one at `path` (which must not exist) and returns `path`. */
export function hostileFile(kind: HostileKind, path: string): string {
  if (kind === 'a symlink to /dev/zero') symlinkSync('/dev/zero', path);
  else if (kind === 'a FIFO nobody writes to') execFileSync('mkfifo', [path]);
  else if (kind === 'a directory') mkdirSync(path);
  else {
    writeFileSync(path, '');
    truncateSync(path, 600 * 1024 * 1024);
  }
  return path;
}
