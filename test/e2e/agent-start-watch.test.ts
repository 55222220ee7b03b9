/**
 * `agent.start.watch` (issue 33, item 3) as a whole process: a child `vitest --watch` (stdin a pipe, not a TTY) starts
 * the fixture agent from a shell command and runs a storyboard; saving a file of the agent's source restarts the agent
 * (a new process group) and re-runs the storyboard green. A restart whose command exits at once fails that re-run with
 * the one line a failed first start stops the run with, and the watch goes on: the next save starts the agent again.
 * At the end (SIGTERM to the child) nothing listens on the port and no process of the group is left.
 *
 * The agent's folder is outside the project root (a temporary directory, `agent.start.cwd`): Vite's watcher does not
 * see it unless the plugin adds it. The command writes its shell's pid (the leader of the agent's process group) to a
 * file, and refuses to start while `agent-src/mode` says `broken`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectGone, groupAlive, groupOf } from '../helpers/agent-gone.js';
import { builtDist } from '../helpers/built.js';
import { closedPort } from '../helpers/ports.js';
import { NO_AGENT_ENV, repoRoot } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'agent-start.config.ts');
const discovery = join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml');
const fixtureCli = join(repoRoot, 'fixtures', 'agent', 'cli.mjs');
const captureReporter = join(repoRoot, 'test', 'helpers', 'capture-reporter.ts');

let agentDir: string;
let child: ChildProcess | undefined;
let output = '';

beforeAll(() => {
  agentDir = mkdtempSync(join(tmpdir(), 'vitest-adcp-agent-watch-'));
  mkdirSync(join(agentDir, 'agent-src'));
});
afterAll(() => {
  // Only when the test failed before its own SIGTERM: the run's exit handler then takes the agent down.
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(agentDir, { recursive: true, force: true });
});

interface Captured {
  tests: { state: string; errors: { message: string }[]; meta: unknown }[];
}

/** The next run the child reported (the capture reporter writes one file per run), within a bound. */
async function nextRun(capture: string, timeoutMs = 90_000): Promise<Captured> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child?.exitCode !== null || child?.signalCode !== null)
      throw new Error(`vitest --watch ended (${child?.exitCode ?? child?.signalCode}):\n${output}`);
    if (existsSync(capture)) {
      try {
        const run = JSON.parse(readFileSync(capture, 'utf8')) as Captured;
        rmSync(capture);
        return run;
      } catch {
        // Being written: look again.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`vitest --watch reported no run within ${timeoutMs} ms:\n${output}`);
}

it('restarts the agent on a save of its source, re-runs the storyboard green, survives a failed restart, and leaves nothing behind', async () => {
  const port = await closedPort();
  const pidFile = join(agentDir, 'group.pid');
  const capture = join(agentDir, 'capture.json');
  const source = join(agentDir, 'agent-src', 'server.mjs');
  const mode = join(agentDir, 'agent-src', 'mode');
  writeFileSync(source, '// v1\n');
  writeFileSync(mode, 'ok\n');
  const command = [
    `echo $$ > '${pidFile}'`,
    `if grep -q broken agent-src/mode; then echo 'agent: broken on purpose'; exit 3; fi`,
    `'${process.execPath}' '${fixtureCli}' --port ${port}`,
  ].join('; ');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...NO_AGENT_ENV,
    CI: undefined,
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    GITHUB_STEP_SUMMARY: undefined,
    VITEST_ADCP_CAPTURE: capture,
    E2E_START: command,
    E2E_START_CWD: agentDir,
    E2E_WATCH: 'agent-src/**',
    E2E_AGENT_URL: `http://127.0.0.1:${port}/mcp`,
    E2E_STORYBOARDS: discovery,
    // The plugin the config loads (test/e2e/plugin-under-test.ts).
    E2E_PLUGIN_BUILD: await builtDist(),
  };
  for (const key of Object.keys(env))
    if (env[key] === undefined || (key.startsWith('VITEST') && key !== 'VITEST_ADCP_CAPTURE')) delete env[key];
  child = spawn(
    process.execPath,
    [
      join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'),
      '--watch',
      '--config',
      config,
      '--reporter=default',
      `--reporter=${captureReporter}`,
    ],
    { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const states = (run: Captured) => run.tests.map((t) => t.state);
  /** The run host read no tool list from an agent still (re)starting: a step's record would keep that warning. */
  const noHalfStartedReads = (run: Captured) =>
    expect(JSON.stringify(run.tests.map((t) => t.meta))).not.toContain('tool list could not be read');

  const first = await nextRun(capture);
  expect(states(first), output).toEqual(['passed', 'passed', 'passed', 'passed']);
  noHalfStartedReads(first);
  const firstGroup = groupOf(pidFile);

  // A save of the agent's source: the agent is stopped and started again before the storyboard re-runs.
  writeFileSync(source, '// v2\n');
  const second = await nextRun(capture);
  expect(states(second), output).toEqual(['passed', 'passed', 'passed', 'passed']);
  noHalfStartedReads(second);
  const secondGroup = groupOf(pidFile);
  expect(secondGroup).not.toBe(firstGroup);
  expect(groupAlive(firstGroup)).toBe(false);

  // A restart that fails: the re-run fails with the first start's one line, and vitest keeps watching.
  writeFileSync(mode, 'broken\n');
  const third = await nextRun(capture);
  expect(states(third), output).toEqual(['failed', 'failed', 'failed', 'failed']);
  const message = third.tests[0]!.errors[0]!.message;
  expect(message).toMatch(/^vitest-adcp cannot run the storyboards: the agent command `[^\n]*` exited with code 3/);
  expect(message).toContain(
    `before it answered at http://127.0.0.1:${port}/mcp; its last output: "agent: broken on purpose"`,
  );
  expect(groupAlive(secondGroup)).toBe(false);

  // The next save tries again.
  writeFileSync(mode, 'ok\n');
  const fourth = await nextRun(capture);
  expect(states(fourth), output).toEqual(['passed', 'passed', 'passed', 'passed']);
  noHalfStartedReads(fourth);
  expect(groupOf(pidFile)).not.toBe(secondGroup);

  const ended = new Promise((resolve) => child!.once('exit', resolve));
  child.kill('SIGTERM');
  await ended;
  await expectGone(pidFile, port);
});
