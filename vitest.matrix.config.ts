import { defineConfig } from 'vitest/config';

/**
 * `npm run test:matrix`: the packed package in fresh repos on every test runner version we support (Jest 29 and 30.5,
 * Vitest 3.2, 4.1.12 and 5.1 — the last on Node 22 from the registry). Minutes of npm installs: not part of `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/matrix/**/*.matrix.ts'],
    globalSetup: ['test/setup/fixture-agent.ts'],
    env: { GITHUB_STEP_SUMMARY: '' },
    // Installs wait on the network and the npm cache (shared by all); two at a time on 2 cores.
    maxWorkers: 2,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
