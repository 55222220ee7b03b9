import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/project/**', '**/node_modules/**'],
    globalSetup: ['test/setup/fixture-agent.ts'],
    // End-to-end tests start real vitest runs and npm installs.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
