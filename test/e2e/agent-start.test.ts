/**
 * `agent.start` and `--start` (issue 33), as whole processes with real sockets: a child `vitest run` (and the built
 * bin) starts the fixture agent from a shell command, runs a storyboard against it and takes it down — afterwards
 * nothing listens on the port and no process of the agent's group is left. A command that exits at once, and one that
 * never answers, stop the run with one line (the bin: exit 2); an agent already answering is used and left running.
 *
 * The commands write the shell's pid (`$$`: the leader of the process group the agent runs in) to a file, and run the
 * agent as the shell's child rather than `exec` it: the stop must take a command's children down, not the shell alone.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent } from '../../fixtures/agent/server.mjs';
import { connectTo, expectGone } from '../helpers/agent-gone.js';
import { closedPort } from '../helpers/ports.js';
import { buildBin, repoRoot, runNode, runVitest } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'agent-start.config.ts');
const discovery = join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml');
const fixtureCli = join(repoRoot, 'fixtures', 'agent', 'cli.mjs');
const scratch = join(repoRoot, '.vitest-adcp', `agent-start-${process.pid}`);
const reporter = join(repoRoot, 'src', 'vitest', 'reporter.ts');
/** No agent from the environment, and not CI: `reuseExisting` takes its local default unless a test sets CI. */
const CLEAN_ENV = { ADCP_AGENT_URL: undefined, ADCP_AUTH_TOKEN: undefined, ADCP_PROTOCOL: undefined, CI: undefined };
const ONE_LINE = /vitest-adcp cannot run the storyboards: the agent command `[^\n]*/g;

let n = 0;
/** A fresh pid file in the scratch directory. */
function pidFile(): string {
  return join(scratch, `group-${++n}.pid`);
}

/** A shell command that records its process group and then runs `inner` as its child. */
function recorded(pid: string, inner: string): string {
  return `echo $$ > '${pid}'; ${inner}`;
}

function fixtureAgent(port: number): string {
  return `'${process.execPath}' '${fixtureCli}' --port ${port}`;
}

function startEnv(command: string, port: number, extra: Record<string, string | undefined> = {}) {
  return {
    ...CLEAN_ENV,
    E2E_START: command,
    E2E_AGENT_URL: `http://127.0.0.1:${port}/mcp`,
    E2E_STORYBOARDS: discovery,
    ...extra,
  };
}

beforeAll(() => mkdirSync(scratch, { recursive: true }));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('agent.start in vitest.config.ts', () => {
  it('starts the agent, passes a storyboard, keeps its log beside the report, and leaves nothing behind', async () => {
    const port = await closedPort();
    const pid = pidFile();
    const report = join(scratch, 'report.json');
    const run = await runVitest({
      config,
      env: startEnv(recorded(pid, fixtureAgent(port)), port),
      reporters: [reporter],
      args: [`--outputFile.vitest-adcp=${report}`],
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.tests.map((t) => t.state)).toEqual(['passed', 'passed', 'passed', 'passed']);
    // The run host read the agent's tool list once it answered, not while it started (the record would keep a warning).
    expect(JSON.stringify(run.tests.map((t) => t.meta))).not.toContain('tool list could not be read');
    await expectGone(pid, port);
    expect(readFileSync(`${report}.agent.log`, 'utf8')).toContain(`fixture agent: http://127.0.0.1:${port}/mcp`);
  });

  it('a command that exits at once stops the run with one line: the command, its exit code, its last output', async () => {
    const port = await closedPort();
    const run = await runVitest({
      config,
      env: startEnv(`echo 'listening soon'; echo 'Error: no such config' >&2; exit 3`, port),
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).not.toBe(0);
    const lines = output.match(ONE_LINE) ?? [];
    expect(lines, output).toHaveLength(1);
    expect(lines[0]).toContain('exited with code 3 before it answered at');
    expect(lines[0]).toContain('its last output: "listening soon | Error: no such config"');
    expect(run.tests).toEqual([]);
  });

  it('a command that never answers is stopped within timeoutMs, with one line, and its group is gone', async () => {
    const port = await closedPort();
    const pid = pidFile();
    const started = Date.now();
    const run = await runVitest({
      config,
      env: startEnv(recorded(pid, `'${process.execPath}' -e 'setInterval(() => {}, 1000)'`), port, {
        E2E_START_TIMEOUT: '2000',
      }),
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).not.toBe(0);
    const lines = output.match(ONE_LINE) ?? [];
    expect(lines, output).toHaveLength(1);
    expect(lines[0]).toContain('did not answer at');
    expect(lines[0]).toContain('within 2000 ms');
    // The child vitest's own start and close take a few seconds; the agent's wait is bounded by the 2 s.
    expect(Date.now() - started).toBeLessThan(20_000);
    await expectGone(pid, port);
  });

  it('an agent already answering at agent.url is used as it is and left running (reuseExisting, not in CI)', async () => {
    const agent = await startFixtureAgent({ port: await closedPort() });
    try {
      const before = agent.callsFor('get_adcp_capabilities').length;
      // The command would fail the run if it were run.
      const run = await runVitest({ config, env: startEnv('exit 7', agent.port) });
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(agent.callsFor('get_adcp_capabilities').length).toBeGreaterThan(before);
      expect(await connectTo(agent.port)).toBe('connected');
    } finally {
      await agent.close();
    }
  });

  it('in CI an agent already answering is refused, not reused: the run stops with the fix', async () => {
    const agent = await startFixtureAgent({ port: await closedPort() });
    try {
      const run = await runVitest({ config, env: startEnv('exit 7', agent.port, { CI: 'true' }) });
      const output = run.stdout + run.stderr;
      expect(run.exitCode).not.toBe(0);
      expect(output).toContain(`an agent already answers at http://127.0.0.1:${agent.port}/mcp`);
      expect(output).toContain('agent.start.reuseExisting is false (the default when CI is set)');
      expect(await connectTo(agent.port)).toBe('connected');
    } finally {
      await agent.close();
    }
  });
});

/**
 * Starts `node <args>` (a run), waits until the agent's shell has written its pid file, sends the run `signal`, and
 * resolves to the run's exit code once it has ended.
 */
async function interrupted(
  args: string[],
  env: Record<string, string | undefined>,
  pid: string,
  signal: NodeJS.Signals,
) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0', ...env };
  for (const key of Object.keys(childEnv))
    if (childEnv[key] === undefined || key.startsWith('VITEST')) delete childEnv[key];
  const run = spawn(process.execPath, args, { cwd: repoRoot, env: childEnv, stdio: 'ignore' });
  const ended = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
  const until = Date.now() + 60_000;
  while (!existsSync(pid) || readFileSync(pid, 'utf8').trim() === '') {
    if (Date.now() > until) throw new Error('the agent was never started');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  run.kill(signal);
  return ended;
}

describe('the run ends early: the agent goes with it', () => {
  const never = (pid: string) => recorded(pid, `'${process.execPath}' -e 'setInterval(() => {}, 1000)'`);

  it("SIGTERM to `vitest run` while the agent starts: the run exits, and the agent's group is gone", async () => {
    const port = await closedPort();
    const pid = pidFile();
    const vitestBin = join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
    const code = await interrupted([vitestBin, 'run', '--config', config], startEnv(never(pid), port), pid, 'SIGTERM');
    expect(code).not.toBe(0);
    await expectGone(pid, port);
  });
});

describe('npx vitest-adcp <url> --start', () => {
  const binScratch = join(scratch, 'bin');
  let cliJs: string;
  beforeAll(async () => {
    cliJs = await buildBin(binScratch);
  });

  it('starts the agent, runs the storyboards against it, and leaves nothing behind', async () => {
    const port = await closedPort();
    const pid = pidFile();
    const report = join(scratch, 'bin-report.json');
    const run = await runNode(
      [
        cliJs,
        `http://127.0.0.1:${port}/mcp`,
        '--start',
        recorded(pid, fixtureAgent(port)),
        '--storyboards',
        discovery,
        '--report',
        report,
      ],
      { env: CLEAN_ENV },
    );
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/4 passed/);
    await expectGone(pid, port);
    expect(existsSync(`${report}.agent.log`)).toBe(true);
  });

  it('a command that exits at once: one line on stderr, exit 2', async () => {
    const port = await closedPort();
    const run = await runNode([cliJs, `http://127.0.0.1:${port}/mcp`, '--start', 'echo bye; exit 1'], {
      env: CLEAN_ENV,
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
    expect(run.stderr).toMatch(/the agent command `echo bye; exit 1` exited with code 1 before it answered at .*"bye"/);
  });

  it("Ctrl-C (SIGINT) of the bin while the agent starts: exit 130, and the agent's group is gone", async () => {
    const port = await closedPort();
    const pid = pidFile();
    const command = recorded(pid, `'${process.execPath}' -e 'setInterval(() => {}, 1000)'`);
    const code = await interrupted(
      [cliJs, `http://127.0.0.1:${port}/mcp`, '--start', command],
      CLEAN_ENV,
      pid,
      'SIGINT',
    );
    expect(code).toBe(130);
    await expectGone(pid, port);
  });

  it('a command that never answers: stopped within --start-timeout, one line, exit 2, its group gone', async () => {
    const port = await closedPort();
    const pid = pidFile();
    const started = Date.now();
    const run = await runNode(
      [
        cliJs,
        `http://127.0.0.1:${port}/mcp`,
        '--start',
        recorded(pid, `'${process.execPath}' -e 'setInterval(() => {}, 1000)'`),
        '--start-timeout',
        '1500',
      ],
      { env: CLEAN_ENV },
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
    expect(run.stderr).toContain('within 1500 ms');
    expect(Date.now() - started).toBeLessThan(10_000);
    await expectGone(pid, port);
  });
});
