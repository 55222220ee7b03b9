/**
 * The config the end-to-end tests run a real `vitest run` with: our plugin as a user adds it, the storyboards named by
 * E2E_STORYBOARDS (comma-separated globs) and E2E_FILES (explicit files, any name), corpus storyboards by id
 * (E2E_CORPUS) and/or by the agent's capabilities (E2E_FROM_CAPABILITIES=1), the cache directory (E2E_CACHE_DIR, `off`:
 * none), the TS tests of test/e2e/project, the tests' own `XDG_CACHE_HOME` (E2E_TEST_XDG_CACHE_HOME: `test.env`, which
 * the workers see and the main process does not), and the agent from ADCP_AGENT_URL.
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from './plugin-under-test.js';

const storyboards = (process.env.E2E_STORYBOARDS ?? '').split(',').filter(Boolean);

export default defineConfig({
  plugins: [
    adcpStoryboards({
      include: storyboards,
      files: (process.env.E2E_FILES ?? '').split(',').filter(Boolean),
      compliance: {
        storyboards: (process.env.E2E_CORPUS ?? '').split(',').filter(Boolean),
        fromCapabilities: process.env.E2E_FROM_CAPABILITIES === '1',
      },
      timeoutMs: 5_000,
      isolate: process.env.E2E_ISOLATE === '1',
      ...(process.env.E2E_CACHE_DIR
        ? { cacheDir: process.env.E2E_CACHE_DIR === 'off' ? false : process.env.E2E_CACHE_DIR }
        : {}),
    }),
  ],
  test: {
    include: process.env.E2E_TS_TESTS === '1' ? ['test/e2e/project/**/*.test.ts'] : [],
    passWithNoTests: true,
    ...(process.env.E2E_TEST_XDG_CACHE_HOME ? { env: { XDG_CACHE_HOME: process.env.E2E_TEST_XDG_CACHE_HOME } } : {}),
  },
});
