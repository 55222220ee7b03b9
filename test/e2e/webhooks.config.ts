/**
 * The config test/e2e/webhooks.test.ts runs a real `vitest run` with: our
 * plugin hosting a loopback webhook receiver in the main process, and the
 * corpus storyboards named by E2E_CORPUS, against ADCP_AGENT_URL.
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from './plugin-under-test.js';

export default defineConfig({
  plugins: [
    adcpStoryboards({
      include: [],
      compliance: { storyboards: (process.env.E2E_CORPUS ?? '').split(',').filter(Boolean) },
      timeoutMs: 10_000,
      webhooks: { receiver: process.env.E2E_WEBHOOKS === 'off' ? 'off' : 'loopback' },
    }),
  ],
  test: { include: [], passWithNoTests: true },
});
