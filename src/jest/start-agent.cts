/**
 * `vitest-adcp/jest/start-agent`: `agent.start` under Jest (issue 33), the preset's `globalSetup` when its options have
 * `adcp.start`. Jest runs it once in its main process before any test file, with the project's config: the options
 * come from `testEnvironmentOptions.adcp` — the object the preset already hands the test environment (the agent's URL,
 * protocol and token with their ADCP_* fallbacks), so the agent started is the one the steps call, and nothing has to
 * travel through the environment's variables or Jest's `globals` (which would land on every test file's global).
 *
 * The agent is started and stopped by agent/agent-start.ts, as the Vitest plugin and the bin do; stop-agent.cts (the
 * `globalTeardown`) takes it down. Its log goes beside the contract report of `vitest-adcp/jest/reporter`
 * (`<report>.agent.log`) when that reporter is configured.
 */
import type { StartedAgent } from '../agent/agent-start.js' with { 'resolution-mode': 'import' };
import type { JestAdcpOptions } from './suite.js' with { 'resolution-mode': 'import' };

const nodePath = require('node:path') as typeof import('node:path');
// Node's require of an ES module (Node ≥ 20.19 / 22.12), as the reporter loads the report builder.
const { startAgent } = require('../agent/agent-start.js') as typeof import('../agent/agent-start.js');
const { exitOnSignal } = require('../agent/exit-on-signal.js') as typeof import('../agent/exit-on-signal.js');
const { resolveRuntimeConfig } = require('../config.js') as typeof import('../config.js');
const { ConfigurationError } = require('../model/errors.js') as typeof import('../model/errors.js');
const { sanitizeOutput } = require('../model/redact.js') as typeof import('../model/redact.js');
const { DEFAULT_REPORT_FILE } = require('../report/write.js') as typeof import('../report/write.js');
const { AGENT_LOG_ENV } = require('./records.cjs') as { AGENT_LOG_ENV: string };

/** What the global setup leaves for the teardown: Jest runs both in its main process, and they share its global. */
const STARTED = Symbol.for('vitest-adcp.jest.started-agent');

interface JestStartedAgent {
  agent: StartedAgent;
  offSignals: () => void;
}

interface GlobalConfigLike {
  rootDir: string;
  reporters?: unknown[];
  watch?: boolean;
  watchAll?: boolean;
}

interface ProjectConfigLike {
  rootDir: string;
  testEnvironmentOptions?: { adcp?: JestAdcpOptions };
}

async function startAgentForJest(globalConfig: GlobalConfigLike, projectConfig: ProjectConfigLike): Promise<void> {
  const options = projectConfig.testEnvironmentOptions?.adcp ?? {};
  const start = options.start;
  if (!start) return;
  const config = resolveRuntimeConfig(options, process.env);
  // Jest's main process has no signal handler of its own outside watch mode, and Node's default ends it without its
  // `exit` event — the event that takes a started agent down: Ctrl-C, from the start on, exits through process.exit.
  const offSignals = exitOnSignal();
  try {
    if (!config.agentUrl)
      throw new ConfigurationError(
        'vitest-adcp cannot run the storyboards: adcp.start is set, but no agent URL says where the started agent answers: set adcp.agentUrl in createJestPreset({ adcp: { agentUrl, start } }) (env ADCP_AGENT_URL), e.g. http://127.0.0.1:4100/mcp',
      );
    const report = contractReportFile(globalConfig);
    // Jest's workers inherit this process's environment: their failing steps name the log (environment.cts).
    if (report) process.env[AGENT_LOG_ENV] = `${report}.agent.log`;
    const agent = await startAgent(
      start,
      { url: config.agentUrl, protocol: config.protocol, ...(config.authToken ? { authToken: config.authToken } : {}) },
      { root: projectConfig.rootDir, ...(report ? { logFile: `${report}.agent.log` } : {}) },
    );
    (globalThis as Record<symbol, JestStartedAgent | undefined>)[STARTED] = { agent, offSignals };
  } catch (error) {
    offSignals();
    if (!(error instanceof ConfigurationError) || globalConfig.watch || globalConfig.watchAll) throw error;
    // Jest would print this as "Jest: Got error running globalSetup - <path>, reason: …" and exit 1, its code for any
    // failure; the one line and exit 2 are what the bin and `vitest run` give for the same failure. Watch mode is
    // left to Jest, which keeps watching.
    process.stderr.write(`${sanitizeOutput(error.message)}\n`);
    process.exit(2);
  }
}

/**
 * The contract report's file when `vitest-adcp/jest/reporter` is among Jest's reporters: its `outputFile`, else the
 * reporter's default, resolved against Jest's rootDir as the reporter resolves it.
 */
function contractReportFile(globalConfig: GlobalConfigLike): string | undefined {
  for (const entry of globalConfig.reporters ?? []) {
    const [reporter, options] = Array.isArray(entry) ? entry : [entry, undefined];
    if (
      typeof reporter !== 'string' ||
      !/(^vitest-adcp\/jest\/reporter$|[\\/]jest[\\/]reporter\.c?[jt]s$)/.test(reporter)
    )
      continue;
    const outputFile = (options as { outputFile?: unknown } | undefined)?.outputFile;
    return nodePath.resolve(globalConfig.rootDir, typeof outputFile === 'string' ? outputFile : DEFAULT_REPORT_FILE);
  }
  return undefined;
}

module.exports = startAgentForJest;
module.exports.default = startAgentForJest;
