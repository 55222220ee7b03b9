/**
 * The config the end-to-end tests run a real `vitest run` with: our plugin as
 * a user adds it, the storyboards named by E2E_STORYBOARDS (comma-separated
 * globs) and E2E_FILES (explicit files, any name), the TS tests of test/e2e/project, and the agent from ADCP_AGENT_URL.
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from '../../src/index.js';

const storyboards = (process.env.E2E_STORYBOARDS ?? '').split(',').filter(Boolean);

export default defineConfig({
  plugins: [
    adcpStoryboards({
      include: storyboards,
      files: (process.env.E2E_FILES ?? '').split(',').filter(Boolean),
      compliance: process.env.E2E_CORPUS ? { storyboards: process.env.E2E_CORPUS.split(',') } : undefined,
      timeoutMs: 5_000,
    }),
  ],
  test: {
    include: process.env.E2E_TS_TESTS === '1' ? ['test/e2e/project/**/*.test.ts'] : [],
    passWithNoTests: true,
  },
});
