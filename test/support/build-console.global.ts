import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { consoleIsStale } from '../../scripts/build-console.js';

/**
 * Builds the web console into console/dist before any test runs, when it is missing or older than
 * its sources, as `npm run build` does: the app serves it and the browser tests drive it. In a
 * process of its own: Vite's production build, not one inside the test runner's own Vite.
 */
export default function setup(): void {
  if (!consoleIsStale()) return;
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const { NODE_ENV: _testMode, ...env } = process.env;
  execFileSync(process.execPath, [tsx, 'scripts/build-console.ts'], { stdio: 'inherit', env: { ...env, NODE_ENV: 'production' } });
}
