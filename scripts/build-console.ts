import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

/**
 * Builds the web console (`console/`) into `console/dist` with Vite; the service serves it at
 * /console/ (src/http/routes/console.ts). Part of `npm run build`; the browser tests call
 * `buildConsoleIfStale` before they run, so a clean clone needs no step of its own.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_ROOT = join(root, 'console');
export const CONSOLE_DIST = join(CONSOLE_ROOT, 'dist');

export interface BuiltFile {
  file: string;
  bytes: number;
  gzipBytes: number;
}

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));

export async function buildConsole(): Promise<BuiltFile[]> {
  await build({ configFile: join(CONSOLE_ROOT, 'vite.config.ts'), mode: 'production', logLevel: 'warn' });
  return filesUnder(CONSOLE_DIST).map((path) => {
    const content = readFileSync(path);
    return { file: relative(CONSOLE_DIST, path), bytes: content.length, gzipBytes: gzipSync(content, { level: 9 }).length };
  });
}

/** True when console/dist is missing or older than any of the console's sources. */
export function consoleIsStale(): boolean {
  let built: number;
  try {
    built = statSync(join(CONSOLE_DIST, 'index.html')).mtimeMs;
  } catch {
    return true;
  }
  const sources = [...filesUnder(join(CONSOLE_ROOT, 'src')), join(CONSOLE_ROOT, 'index.html'), join(CONSOLE_ROOT, 'vite.config.ts')];
  return sources.some((path) => statSync(path).mtimeMs > built);
}

export async function buildConsoleIfStale(): Promise<void> {
  if (consoleIsStale()) await buildConsole();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const built = await buildConsole();
  for (const file of built) console.log(`console/dist/${file.file}  ${file.bytes} bytes, ${file.gzipBytes} gzipped`);
}
