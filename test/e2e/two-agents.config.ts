/**
 * Two Vitest projects, each testing its own agent with the same storyboard
 * (E2E_AGENT_A, E2E_AGENT_B; E2E_STORYBOARDS as in vitest.e2e.config.ts): the
 * contract report must keep them apart (test/e2e/reporter.test.ts).
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from './plugin-under-test.js';

const include = (process.env.E2E_STORYBOARDS ?? '').split(',').filter(Boolean);
const project = (name: string, url: string | undefined) => ({
  plugins: [adcpStoryboards({ include, agent: { url }, timeoutMs: 5_000 })],
  test: { name, include: [] as string[], passWithNoTests: true },
});

export default defineConfig({
  test: {
    passWithNoTests: true,
    projects: [project('agent-a', process.env.E2E_AGENT_A), project('agent-b', process.env.E2E_AGENT_B)],
  },
});
