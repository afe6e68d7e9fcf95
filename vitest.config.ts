import { configDefaults, defineConfig } from 'vitest/config';
import { filesLackingPackages } from './test/support/requirements.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A test file needing a Debian package that is not installed (Chromium, nginx,
    // python3-prometheus-client) is left out with one line naming it; with CI=true, never.
    exclude: [...configDefaults.exclude, ...filesLackingPackages(import.meta.dirname)],
    // Once per run, first: every temporary file of the run goes under one directory removed at
    // its end (test/support/temp-root.global.ts); the device SDK and the web console are built when missing or stale (the
    // app serves them and the browser tests load them), and one throwaway PostgreSQL is started (each test file makes its own databases on it).
    globalSetup: ['test/support/temp-root.global.ts', 'test/support/build-sdk.global.ts', 'test/support/build-console.global.ts', 'test/support/global-setup.ts'],
    // Tests start real DNS servers and real ports; keep them from starving each other on 2 cores.
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
