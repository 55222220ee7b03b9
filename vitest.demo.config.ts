/**
 * The demo: the bundled storyboards (ours in fixtures/storyboards, plus the
 * corpus's capability_discovery) against the bundled fixture agent, whose URL
 * scripts/demo.mjs passes in ADCP_AGENT_URL — exactly how a user's CI would.
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from './src/index.js';

export default defineConfig({
  plugins: [
    adcpStoryboards({
      include: ['fixtures/storyboards/**/*.storyboard.yaml'],
      compliance: { storyboards: ['capability_discovery'] },
    }),
  ],
  test: {
    include: [],
    // The storyboards are the tests here; keep unit tests out of the demo.
    passWithNoTests: false,
    // The whole describe(storyboard) › describe(phase) › it(step) tree, and the
    // runner output contract JSON AdCP tooling reads.
    reporters: ['tree', ['./src/vitest/reporter.ts', { outputFile: '.vitest-adcp/demo-results.json' }]],
  },
});
