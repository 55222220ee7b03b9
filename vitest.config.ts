import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/project/**', '**/node_modules/**'],
    // shared-builds: the per-run directory in which the package is packed and src built once for all test files.
    globalSetup: ['test/setup/fixture-agent.ts', 'test/setup/shared-builds.ts'],
    // The contract reporter appends to $GITHUB_STEP_SUMMARY when it is set: reporters under test must not write into
    // the job summary of the CI job running this suite (child runs: test/helpers/run-vitest.ts unsets it too).
    env: { GITHUB_STEP_SUMMARY: '' },
    // Vitest's default on 2 cores is one worker; most tests wait on sockets and child processes (npm installs, child
    // vitest runs), so several overlap well (measured on this 2-core machine: one worker 237 s; three 175 s; four 168 s).
    maxWorkers: 4,
    // End-to-end tests start real vitest runs and npm installs.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
