/**
 * The fast lane, `npm run test:unit`: the tests that run in this process only (the fixture agent of the global setup
 * on 127.0.0.1 included), for the inner loop. `npm test` (vitest.config.ts) still runs everything, this lane too.
 *
 * Left out: every file that starts a process or builds — child `vitest` / `jest` runs, `npm pack` and installs, tsc
 * builds, node children, a browser — and three long in-process runs. test/lanes.test.ts fails when a test file that does (it names `spawn`,
 * `execFile`, `runVitest`, …) is not listed here, so the lane stays in-process as tests are added.
 */
import { defineConfig } from 'vitest/config';

/** Folders and files left out of the unit lane: a folder ends with `/`. */
export const notUnit = [
  'test/e2e/', // child vitest and jest runs, the CLI, npm pack and installs
  'test/types/', // the packed package type-checked by tsc
  'test/matrix/', // packed installs of each supported Vitest and Jest (its own config)
  'test/webhooks/forgery.test.ts', // a child vitest run against a forging agent
  'test/client/client.test.ts', // a node child loading the client as Jest would
  'test/storyboard/bounds.test.ts', // a node child with a 300 MB heap
  'test/storyboard/read-bounded.test.ts', // loads the Jest transformer from the shared build
  'test/storyboard/prebuilt-validator.test.ts', // the storyboard validator the shared build compiled ahead
  'test/report/views.test.ts', // headless Chromium, when installed
  'test/cache/disk-cache.test.ts', // mkfifo
  'test/transport/mcp-first-call.test.ts', // a node child whose MCP SDK import is held back (the shared build)
  // In-process, but long: the lane is for the inner loop. `npm test` runs them.
  'test/transport/a2a-parity.e2e.test.ts', // every fixture and green corpus storyboard over MCP and A2A: ~55 s
  'test/engine/corpus-run.e2e.test.ts', // the whole corpus against the fixture agent, no verdicts asserted
  'test/lint/layer-rule.test.ts', // ESLint over the whole tree: `npm run lint`'s job
];

/** Never test files of this suite: the user project the e2e tests run, and installed packages. */
export const notTests = ['test/e2e/project/**', '**/node_modules/**'];

/** `notUnit` as globs: every file under a folder, or the file itself. */
const notUnitGlobs = notUnit.map((path) => (path.endsWith('/') ? `${path}**` : path));

/**
 * The unit lane's files and how they run, for `npm run test:unit` (below) and `npm test`'s `unit` project
 * (vitest.config.ts): one module graph per worker, not one per file — importing src/ again for each of ~130 files was
 * most of the lane's time. These tests share no state through modules (they restore what they change in process.env).
 */
export const unitProject = {
  include: ['test/**/*.test.ts'],
  exclude: [...notTests, ...notUnitGlobs],
  globalSetup: ['test/setup/fixture-agent.ts'],
  isolate: false,
};

export default defineConfig({
  test: {
    ...unitProject,
    // As vitest.config.ts: reporters under test must not write into this CI job's summary.
    env: { GITHUB_STEP_SUMMARY: '' },
    // Vitest's default on 2 cores is one worker; these tests wait on the fixture agent's sockets, on timeouts and
    // retry-afters as much as they compute (measured on this 2-core machine, in two sessions of one day: 2 workers
    // 72–78 s, 77–87 CPU-s; 3 workers 58–67 s, 82–95 CPU-s; 4 workers 58–64 s, 96–109 CPU-s).
    maxWorkers: 3,
    // As vitest.config.ts: under a loaded machine some in-process runs (the whole corpus) take long.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
