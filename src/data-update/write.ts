import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes to a temporary file in the same directory, then renames it into place: the service (or
 * anything reading the file) sees the old copy or the new one, never half of one, and its watcher
 * sees a new inode.
 */
export async function replaceAtomically(dir: string, name: string, content: string | Buffer): Promise<void> {
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${name}.${process.pid}.${Date.now()}.tmp`);
  try {
    await writeFile(temp, content);
    await rename(temp, join(dir, name));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
