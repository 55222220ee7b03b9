/**
 * The test run Stryker repeats for every mutant (`npm run mutate`, see
 * stryker.config.mjs): the in-process tests of the mutated modules only —
 * checks, engine, compiler, report — against real fixture agents on 127.0.0.1.
 * Left out: test/e2e (child `vitest` runs and `npm pack`: they would not see
 * the mutant, which lives in this process) and the whole-corpus robustness run
 * (seconds per mutant, and it asserts no verdicts).
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/checks/**/*.test.ts',
      'test/engine/**/*.test.ts',
      'test/plan/**/*.test.ts',
      'test/compile/**/*.test.ts',
      'test/report/**/*.test.ts',
    ],
    exclude: ['test/engine/corpus-run.e2e.test.ts', '**/node_modules/**'],
    globalSetup: ['test/setup/fixture-agent.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
