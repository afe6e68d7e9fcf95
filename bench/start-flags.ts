import { readFileSync } from 'node:fs';

/**
 * `npm start`'s exact Node flags, read from a package.json (this checkout's unless another is
 * named, e.g. the one beside an older build), so a benchmark runs the service as it ships.
 */
export const startFlags = (packageJson = 'package.json'): string[] =>
  (JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ').filter((w) => w.startsWith('--'));
