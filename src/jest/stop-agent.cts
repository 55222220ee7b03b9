/**
 * `vitest-adcp/jest/stop-agent`: the preset's `globalTeardown` when its options have `adcp.start` — stops the agent
 * start-agent.cts started (its whole process group, SIGTERM then SIGKILL: agent/agent-process.ts) and writes its log.
 * A run that never gets here (a crash, a second signal) takes the agent down from the process's `exit` event.
 */
import type { StartedAgent } from '../agent/agent-start.js' with { 'resolution-mode': 'import' };

const STARTED = Symbol.for('vitest-adcp.jest.started-agent');

async function stopAgentForJest(): Promise<void> {
  const store = globalThis as Record<symbol, { agent: StartedAgent; offSignals: () => void } | undefined>;
  const started = store[STARTED];
  store[STARTED] = undefined;
  if (!started) return;
  try {
    await started.agent.stop();
  } finally {
    started.offSignals();
  }
}

module.exports = stopAgentForJest;
module.exports.default = stopAgentForJest;
