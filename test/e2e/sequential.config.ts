/**
 * The config test/e2e/sequential.test.ts runs a real `vitest run` with: the corpus storyboards named by E2E_CORPUS
 * (comma-separated, in that order), `sequential: true` unless E2E_SEQUENTIAL=0, against ADCP_AGENT_URL, with the cache
 * directory E2E_CACHE_DIR when set. Vitest's
 * results cache is off, so without our sequencer its order is by file size alone (larger first) — never the order
 * the test asks for.
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from './plugin-under-test.js';

export default defineConfig({
  plugins: [
    adcpStoryboards({
      include: [],
      compliance: { storyboards: (process.env.E2E_CORPUS ?? '').split(',').filter(Boolean) },
      timeoutMs: 5_000,
      sequential: process.env.E2E_SEQUENTIAL !== '0',
      ...(process.env.E2E_CACHE_DIR ? { cacheDir: process.env.E2E_CACHE_DIR } : {}),
      ...(process.env.E2E_ISOLATE === '1' ? { isolate: true } : {}),
    }),
  ],
  test: {
    include: [],
    passWithNoTests: true,
    cache: false,
  },
});
