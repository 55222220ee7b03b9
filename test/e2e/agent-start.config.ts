/**
 * The config of the `agent.start` end-to-end tests (agent-start.test.ts): the plugin starts the agent itself.
 * E2E_START: the command (a JSON argv array, or a shell string); E2E_AGENT_URL: where it answers; E2E_START_TIMEOUT:
 * agent.start.timeoutMs; E2E_REUSE: `0`/`1` for agent.start.reuseExisting (unset: the default); E2E_STORYBOARDS;
 * E2E_START_CWD: agent.start.cwd; E2E_WATCH: agent.start.watch, comma-separated (agent-start-watch.test.ts).
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from './plugin-under-test.js';

const start = process.env.E2E_START ?? '';
const reuse = process.env.E2E_REUSE;

export default defineConfig({
  plugins: [
    adcpStoryboards({
      include: (process.env.E2E_STORYBOARDS ?? '').split(',').filter(Boolean),
      timeoutMs: 5_000,
      agent: {
        url: process.env.E2E_AGENT_URL!,
        start: {
          command: start.startsWith('[') ? (JSON.parse(start) as string[]) : start,
          ...(process.env.E2E_START_TIMEOUT ? { timeoutMs: Number(process.env.E2E_START_TIMEOUT) } : {}),
          ...(reuse !== undefined ? { reuseExisting: reuse === '1' } : {}),
          ...(process.env.E2E_START_CWD ? { cwd: process.env.E2E_START_CWD } : {}),
          ...(process.env.E2E_WATCH ? { watch: process.env.E2E_WATCH.split(',') } : {}),
        },
      },
    }),
  ],
  test: { include: [], passWithNoTests: true },
});
