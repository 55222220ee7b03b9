/**
 * `npm test`: every test file, in two projects. `unit` is the unit lane (vitest.unit.config.ts), as `npm run test:unit`
 * runs it: one module graph per worker. `e2e` is the rest — child runs, builds, installs — each file in a fresh module
 * graph, with the per-run shared builds. Measured on a 2-core machine (stop 53), the whole suite: 633 s and 1,207 CPU-s
 * with every file isolated, 537 s and 1,002 CPU-s with the unit project not. The e2e files sharing a module graph too
 * gained nothing (stop 55: 261–289 s with it, 273–283 s without; docs/benchmarks.md).
 */
import { defineConfig } from 'vitest/config';
import { notTests, notUnit, unitProject } from './vitest.unit.config.js';

export default defineConfig({
  test: {
    // The contract reporter appends to $GITHUB_STEP_SUMMARY when it is set: reporters under test must not write into
    // the job summary of the CI job running this suite (child runs: test/helpers/run-vitest.ts unsets it too).
    env: { GITHUB_STEP_SUMMARY: '' },
    // Vitest's default on 2 cores is one worker; most tests wait on sockets and child processes (npm installs, child
    // vitest runs), so several overlap well (measured on this 2-core machine: one worker 237 s; three 175 s; four 168 s).
    maxWorkers: 4,
    // End-to-end tests start real vitest runs and npm installs.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    projects: [
      { extends: true, test: { name: 'unit', ...unitProject } },
      {
        extends: true,
        test: {
          name: 'e2e',
          // What the unit lane leaves out: each folder's test files, each file named.
          include: notUnit.map((path) => (path.endsWith('/') ? `${path}**/*.test.ts` : path)),
          exclude: notTests,
          // shared-builds: the per-run directory in which the package is packed and src built once for all test files.
          globalSetup: ['test/setup/fixture-agent.ts', 'test/setup/shared-builds.ts'],
        },
      },
    ],
  },
});
