import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/**
 * The one way the service reads a file: bounded in bytes whatever the path points at.
 *
 * `stat(path).size` is no bound: a device reads 0 and never ends (`/dev/zero`), a FIFO blocks the
 * reader until someone writes, a file can grow between `stat` and `read`, and `/proc` files say 0.
 * So the file is opened without blocking (O_NONBLOCK: opening a FIFO would otherwise hold one of
 * libuv's four threads until a writer comes, and every file and DNS look-up behind it), checked
 * with `fstat` on that descriptor (what is read is what was checked), refused unless it is a
 * regular file, and read for at most `maxBytes + 1` bytes.
 */

/** A file refused for what it is (a device, a FIFO, a directory) or for its size. */
export class FileLimitError extends Error {
  override name = 'FileLimitError';
}

export interface FileRead {
  bytes: Buffer;
  /** From the same descriptor the bytes came from. */
  modified: Date;
}

const CHUNK = 64 * 1024;

export async function readBounded(path: string, maxBytes: number): Promise<FileRead> {
  return withRegularFile(path, maxBytes, async (handle, stats) => {
    // Sized from fstat when it tells the truth; one byte more shows a file that grew since.
    let buffer = Buffer.allocUnsafe(Math.min(maxBytes, stats.size) + 1);
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        if (filled > maxBytes) throw tooLarge(maxBytes);
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(buffer.length * 2, CHUNK)));
        buffer.copy(bigger, 0, 0, filled);
        buffer = bigger;
      }
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes) throw tooLarge(maxBytes);
    return { bytes: buffer.subarray(0, filled), modified: stats.mtime };
  });
}

export async function readBoundedText(path: string, maxBytes: number): Promise<{ text: string; modified: Date }> {
  const { bytes, modified } = await readBounded(path, maxBytes);
  return { text: bytes.toString('utf8'), modified };
}

/**
 * Calls `onLine(line, number)` for each line (`\n`-separated, a trailing `\r` kept, as `split('\n')`
 * gives them), reading 64 KiB at a time: the whole text is never held. (The lists read this way
 * are parsed in a worker thread: src/files/worker.ts.) `onLine` returning `false` stops the read.
 */
export async function readLines(
  path: string,
  maxBytes: number,
  onLine: (line: string, number: number) => boolean | void,
): Promise<{ modified: Date }> {
  return withRegularFile(path, maxBytes, async (handle, stats) => {
    const decoder = new TextDecoder('utf-8');
    const buffer = Buffer.allocUnsafe(CHUNK);
    let total = 0;
    let pending = '';
    let number = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, maxBytes + 1 - total), null);
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(maxBytes);
      // Only what was just read is split: a line longer than a read is joined once, when it ends.
      const lines = decoder.decode(buffer.subarray(0, bytesRead), { stream: bytesRead > 0 }).split('\n');
      lines[0] = pending + lines[0]!;
      pending = bytesRead === 0 ? '' : lines.pop()!;
      for (const line of lines) if (onLine(line, ++number) === false) return { modified: stats.mtime };
      if (bytesRead === 0) return { modified: stats.mtime };
    }
  });
}

async function withRegularFile<T>(path: string, maxBytes: number, read: (handle: FileHandle, stats: Stats) => Promise<T>): Promise<T> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new FileLimitError(`not a regular file (${kindOf(stats)})`);
    if (stats.size > maxBytes) throw tooLarge(maxBytes);
    return await read(handle, stats);
  } finally {
    await handle.close();
  }
}

const tooLarge = (maxBytes: number) => new FileLimitError(`larger than ${maxBytes} bytes`);

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}
