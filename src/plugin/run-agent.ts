/**
 * The plugin's use of `agent.start` (agent-start.ts): the agent started once per Vitest process — before the agent is
 * first asked anything (capability selection, else the run's preflight) — and stopped when Vitest closes, its output
 * kept beside the contract report when one is configured. In `vitest --watch` an edit to its source (`watch`,
 * agent-watch.ts) has the next run's start stop it and start it again.
 */
import { resolve } from 'node:path';
import type { VitestPluginContext } from 'vitest/node';
import type { ResolvedRuntimeConfig } from '../config.js';
import { DEFAULT_REPORT_FILE } from '../report/write.js';
import { startAgent } from '../agent/agent-start.js';
import { watchAgentSource } from './agent-watch.js';
import type { PluginState } from './state.js';

type Vitest = VitestPluginContext['vitest'];

/** Called from configureVitest: where the agent's log goes, and its stop at Vitest's close. Once per plugin instance. */
export function prepareAgentStart(state: PluginState, vitest: Vitest): void {
  if (!state.options.agent?.start || state.agentStartPrepared) return;
  state.agentStartPrepared = true;
  const report = contractReportFile(vitest, state.root);
  if (report) state.agentLogFile = `${report}.agent.log`;
  vitest.onClose(() => closeStartedAgent(state));
  watchAgentSource(state, vitest);
}

/**
 * Starts the agent of `agent.start` unless this Vitest process already has (a failed start is tried again on the next
 * run: watch mode), or restarts it when its source changed since (`watch`). Resolves once it answers; rejects with the
 * one-line ConfigurationError of agent-start.ts, the same for a restart as for the first start.
 */
export async function ensureAgentStarted(state: PluginState, config: ResolvedRuntimeConfig): Promise<void> {
  const start = state.options.agent?.start;
  if (!start || !config.agentUrl) return;
  const begin = () =>
    startAgent(
      start,
      {
        url: config.agentUrl!,
        protocol: config.protocol,
        ...(config.authToken ? { authToken: config.authToken } : {}),
      },
      { root: state.root, ...(state.agentLogFile ? { logFile: state.agentLogFile } : {}) },
    ).catch((error: unknown) => {
      state.agentStarted = undefined;
      state.agentStartFailed = true;
      throw error;
    });
  if (state.agentRestartWanted) {
    state.agentRestartWanted = false;
    // The preflight looks at the new agent again: its tools or its credential check may be what changed.
    state.agentChecked = undefined;
    // One promise from the old agent's stop to the new one's answer: whoever else waits on the agent, or stops it at
    // Vitest's close, waits on the whole restart, and the two never hold the port at once.
    state.agentStarted = stopStartedAgent(state).then(begin);
  }
  state.agentStarted ??= begin();
  await state.agentStarted;
  state.agentStartFailed = false;
}

/** At Vitest's close: the agent stopped, and a failed last start made exit 2. */
async function closeStartedAgent(state: PluginState): Promise<void> {
  // A failed start is a configuration error: exit 2, as the bin's. Vitest sets exit code 1 for the error it caught
  // from the run's start (startVitest) before it closes, so this, at its close, is the last word.
  if (state.agentStartFailed) process.exitCode = 2;
  await stopStartedAgent(state);
}

async function stopStartedAgent(state: PluginState): Promise<void> {
  const started = state.agentStarted;
  state.agentStarted = undefined;
  if (!started) return;
  const agent = await started.catch(() => undefined);
  await agent?.stop();
}

/**
 * The contract report's file when the run writes one: the `vitest-adcp/reporter` entry's `outputFile`, else Vitest's
 * `outputFile['vitest-adcp']`, else the reporter's default — as vitest/reporter.ts chooses it.
 */
function contractReportFile(vitest: Vitest, root: string): string | undefined {
  const outputFile = (vitest.config as { outputFile?: string | Record<string, string> }).outputFile;
  const configured = typeof outputFile === 'object' ? outputFile['vitest-adcp'] : undefined;
  for (const entry of vitest.config.reporters as unknown[]) {
    const [reporter, options] = Array.isArray(entry) ? entry : [entry, undefined];
    const named =
      typeof reporter === 'string' && /(^vitest-adcp\/reporter$|[\\/]vitest[\\/]reporter\.[cm]?[jt]s$)/.test(reporter);
    const instance =
      typeof reporter === 'object' && reporter !== null && reporter.constructor?.name === 'AdcpReporter'
        ? (reporter as { outputFile?: string })
        : undefined;
    if (!named && !instance) continue;
    const file = (options as { outputFile?: string } | undefined)?.outputFile ?? instance?.outputFile ?? configured;
    return resolve(root, file ?? DEFAULT_REPORT_FILE);
  }
  return undefined;
}
