/**
 * `agent.start`: the agent under test started by the run (issue 33), as Playwright's `webServer` starts a web app —
 * from a command, waited for until it answers at `agent.url` as the run will talk to it (agent-ready.ts), and stopped
 * with its whole process group at the end (agent-process.ts). An agent already answering there is used as it is
 * (`reuseExisting`, on by default except in CI), and then never stopped by us.
 *
 * A command that exits before it answers, or does not answer within `timeoutMs`, stops the run with one line: the
 * command, its exit code or the timeout, and the last lines of its output — secrets scrubbed, as every output is.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigurationError } from '../model/errors.js';
import { REDACTED_KEY_PATTERN, sanitizeLine, sanitizeOutput, scrubSecrets, secretsInUrl } from '../model/redact.js';
import { AgentProcess } from './agent-process.js';
import { agentReadiness, type Readiness, type ReadinessTarget } from './agent-ready.js';

/** `agent.start` of `adcpStoryboards()` (plugin/options.ts), the bin's `--start` / `--start-timeout`, the Jest preset's `adcp.start`. */
export interface AgentStartOptions {
  /** A string runs through the shell (`npm run dev`); an array is the program and its arguments, run without one. */
  command: string | string[];
  /** Where it runs, relative to the project root. @default the project root */
  cwd?: string;
  /** Added to the run's own environment. */
  env?: Record<string, string>;
  /** How long the agent has to answer at `agent.url`, in ms. @default 60000 */
  timeoutMs?: number;
  /** Use an agent already answering at `agent.url` as it is (and leave it running). @default true, false when `CI` is set */
  reuseExisting?: boolean;
  /**
   * The agent's source, as globs relative to `cwd` (`['src/**']`). In `vitest --watch` a change to a matching file
   * stops the agent, starts it again (the same readiness wait) and re-runs the storyboard files; `vitest run` and the
   * CLI do not watch. An agent found answering (`reuseExisting`) is not ours to restart: the files re-run against it.
   */
  watch?: string[];
}

export interface StartContext {
  /** The project root: the default `cwd`, and what a relative one is resolved from. */
  root: string;
  /** Where the agent's output is written when it stops (`<report>.agent.log`); undefined: kept in memory only. */
  logFile?: string;
  /** The run's environment: the agent's, and where `CI` is read. @default process.env */
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;
/** How often the agent is looked at while it starts, and the bound on one look. */
const POLL_MS = 200;
const LOOK_MS = 2_000;
/** How many lines of the agent's output the one-line failure quotes. */
const QUOTED_LINES = 5;

/** The agent of a run: started by us, or found answering and reused. */
export interface StartedAgent {
  /** Whether it was already answering (then it is not ours to stop). */
  readonly reused: boolean;
  readonly pid?: number;
  /** Stops it (when ours) and writes its log. */
  stop(): Promise<void>;
}

/** Starts the agent (or finds it answering) and resolves once it answers; rejects with one ConfigurationError line. */
export async function startAgent(
  options: AgentStartOptions,
  target: ReadinessTarget,
  context: StartContext,
): Promise<StartedAgent> {
  const runEnv = context.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const shown = commandLine(options.command);
  checkStartOptions(options, shown);
  const secrets = startSecrets(options, target);
  const safe = (text: string) => sanitizeLine(scrubSecrets(text, secrets));
  const reuse = options.reuseExisting ?? !inCi(runEnv);
  if ((await agentReadiness(target, LOOK_MS)).ready) {
    // Its output is not ours: the log a failing step names says so instead of being absent.
    if (reuse) return { reused: true, stop: async () => writeNote(context.logFile, reusedNote(safe(target.url))) };
    throw new ConfigurationError(
      `vitest-adcp cannot run the storyboards: an agent already answers at ${safe(target.url)}, and agent.start.reuseExisting is false (the default when CI is set), so \`${safe(shown)}\` was not started. Stop the agent that holds that port, or point agent.url (and the command) at a free one, or set agent.start.reuseExisting: true to test the running agent`,
    );
  }
  const agent = new AgentProcess({
    command: options.command,
    cwd: resolve(context.root, options.cwd ?? '.'),
    env: { ...runEnv, ...options.env },
  });
  const writeLog = () => writeNote(context.logFile, sanitizeOutput(scrubSecrets(agent.output.text(), secrets)));
  const lastOutput = () => {
    const lines = agent.output.lastLines(QUOTED_LINES);
    const quoted =
      lines.length > 0 ? `its last output: "${safe(lines.join(' | ')).slice(-600)}"` : 'it wrote no output';
    return context.logFile ? `${quoted}; all of it: ${safe(context.logFile)}` : quoted;
  };
  const stop = async () => {
    await agent.stop();
    writeLog();
  };
  const answered = await untilReady(agent, target, timeoutMs);
  if (answered === 'exited') {
    writeLog();
    throw new ConfigurationError(
      `vitest-adcp cannot run the storyboards: the agent command \`${safe(shown)}\` ${exitPhrase(agent)} before it answered at ${safe(target.url)}; ${lastOutput()}. Run the command yourself to see why it stops, then fix agent.start.command (CLI --start)`,
    );
  }
  if (answered !== true) {
    await stop();
    throw new ConfigurationError(
      `vitest-adcp cannot run the storyboards: the agent command \`${safe(shown)}\` did not answer at ${safe(target.url)} within ${timeoutMs} ms (${safe(answered.seen)}), and was stopped; ${lastOutput()}. Check that agent.url is where the command serves the agent (its port, and its path such as /mcp), or give it longer with agent.start.timeoutMs (CLI --start-timeout)`,
    );
  }
  return { reused: false, ...(agent.pid !== undefined ? { pid: agent.pid } : {}), stop };
}

/** What `<report>.agent.log` says when the agent was already answering and used as it was. */
function reusedNote(url: string): string {
  return `vitest-adcp: an agent already answered at ${url} when the run started, so it was used as it is (agent.start.reuseExisting) and the command was not run; its output is wherever that agent writes it.\n`;
}

/** Writes the agent's log file (when the run keeps one). */
function writeNote(logFile: string | undefined, text: string): void {
  if (!logFile) return;
  mkdirSync(dirname(logFile), { recursive: true });
  writeFileSync(logFile, text);
}

/** Looks at the agent until it answers, exits, or the time is up (then: what the last look saw). */
async function untilReady(
  agent: AgentProcess,
  target: ReadinessTarget,
  timeoutMs: number,
): Promise<true | 'exited' | { seen: string }> {
  const deadline = Date.now() + timeoutMs;
  const exited = agent.exited.then(() => 'exited' as const);
  let last: Readiness = { ready: false, seen: 'nothing answered yet' };
  while (Date.now() < deadline) {
    const left = deadline - Date.now();
    const look = agentReadiness(target, Math.max(1, Math.min(LOOK_MS, left)));
    const first = await Promise.race([look, exited]);
    if (first === 'exited') return 'exited';
    last = first;
    if (last.ready) return true;
    const pause = Math.min(POLL_MS, deadline - Date.now());
    if (pause > 0 && (await Promise.race([sleep(pause), exited])) === 'exited') return 'exited';
  }
  return { seen: last.ready ? 'answered' : `last look: ${last.seen}` };
}

function checkStartOptions(options: AgentStartOptions, shown: string): void {
  const command = options.command as unknown;
  const valid =
    (typeof command === 'string' && command.trim() !== '') ||
    (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === 'string') && command[0]);
  if (!valid)
    throw new ConfigurationError(
      `adcpStoryboards({ agent: { start: { command: ${JSON.stringify(command) ?? 'undefined'} } } }): command is how to start the agent, a string run by the shell ('node server.js --port 4100') or an array of the program and its arguments`,
    );
  const timeout = options.timeoutMs;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1))
    throw new ConfigurationError(
      `agent.start.timeoutMs is ${String(timeout)} for \`${shown}\`: give how long the agent has to answer, in ms (a whole number; default 60000)`,
    );
}

/** `CI` set, as CI services set it (`true`, `1`); `CI=false` or `0` is not CI. */
function inCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/** What the run must not print or write of the agent's: the run's token and URL secrets, and its own secret env values. */
function startSecrets(options: AgentStartOptions, target: ReadinessTarget): string[] {
  const fromEnv = Object.entries(options.env ?? {})
    .filter(([name]) => REDACTED_KEY_PATTERN.test(name) || /token|secret|password|api[_-]?key|credential/i.test(name))
    .map(([, value]) => value);
  return [...(target.authToken ? [target.authToken] : []), ...secretsInUrl(target.url), ...fromEnv];
}

/** The command as the messages show it. */
function commandLine(command: unknown): string {
  if (typeof command === 'string') return command;
  return Array.isArray(command) ? command.map(String).join(' ') : String(command);
}

function exitPhrase(agent: AgentProcess): string {
  const exit = agent.exit;
  if (exit?.signal) return `was ended by ${exit.signal}`;
  if (exit?.code !== null && exit?.code !== undefined) return `exited with code ${exit.code}`;
  return 'could not be started';
}

function sleep(ms: number): Promise<'slept'> {
  return new Promise((resolve) => setTimeout(() => resolve('slept'), ms));
}
