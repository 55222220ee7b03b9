/**
 * `--start "<command>"`: the agent started by this command, as `agent.start` starts it for the plugin
 * (agent/agent-start.ts) — but here, before anything asks the agent (the capability selection of cli.ts runs before
 * Vitest does), and stopped when the command ends. The plugin is then given the running agent, not the command: it
 * would otherwise look at the URL, find our agent answering and, in CI (`reuseExisting` false), refuse it.
 */
import { startAgent, type StartedAgent } from '../agent/agent-start.js';
import { exitOnSignal } from '../agent/exit-on-signal.js';
import type { Invocation } from './invocation.js';

/**
 * Runs `body` with the agent of `--start` up (no agent started without one); the agent is stopped when `body` ends,
 * however it ends. A start that fails rejects with its one-line ConfigurationError (exit 2), and `body` is not run.
 */
export async function withStartedAgent<T>(invocation: Invocation, cwd: string, body: () => Promise<T>): Promise<T> {
  if (!invocation.start) return body();
  const { runtime } = invocation;
  let offSignals = exitOnSignal();
  let agent: StartedAgent | undefined;
  try {
    agent = await startAgent(
      invocation.start,
      {
        url: runtime.agentUrl!,
        protocol: runtime.protocol ?? 'mcp',
        ...(runtime.authToken ? { authToken: runtime.authToken } : {}),
      },
      { root: cwd, ...(invocation.report ? { logFile: `${invocation.report}.agent.log` } : {}) },
    );
    // The run's own signal handling (interruption.ts: the first signal cancels the run, the second exits) from here.
    offSignals();
    try {
      return await body();
    } finally {
      offSignals = exitOnSignal();
    }
  } finally {
    await agent?.stop();
    offSignals();
  }
}
