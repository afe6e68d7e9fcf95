import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests start real DNS servers and real ports; keep them from starving each other on 2 cores.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // One throwaway PostgreSQL for the run; each test file makes its own databases on it.
    globalSetup: ['test/support/global-setup.ts'],
  },
});
