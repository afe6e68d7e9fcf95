import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The device SDK is built once, first: the app serves it and the browser tests load it.
    globalSetup: ['test/support/build-sdk.global.ts'],
    // Tests start real DNS servers and real ports; keep them from starving each other on 2 cores.
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
