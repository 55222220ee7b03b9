import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/project/**', '**/node_modules/**'],
    globalSetup: ['test/setup/fixture-agent.ts'],
    // Vitest's default on 2 cores is one worker; most tests wait on sockets and child processes, so three overlap well
    // (measured: 237 s with one worker, 152 s with three, on this 2-core machine).
    maxWorkers: 3,
    // End-to-end tests start real vitest runs and npm installs.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
