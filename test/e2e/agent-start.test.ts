/**
 * `agent.start` and `--start` (issue 33), as whole processes with real sockets: a child `vitest run` (and the built
 * bin) starts the fixture agent from a shell command, runs a storyboard against it and takes it down — afterwards
 * nothing listens on the port and no process of the agent's group is left. A command that exits at once, and one that
 * never answers, stop the run with one line and exit 2 (`vitest run` and the bin); an agent already answering is used and
 * left running.
 *
 * The commands write the shell's pid (`$$`: the leader of the process group the agent runs in) to a file, and run the
 * agent as the shell's child rather than `exec` it: the stop must take a command's children down, not the shell alone.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent } from '../../fixtures/agent/server.mjs';
import { builtDist, builtModule } from '../helpers/built.js';
import { connectTo, expectGone, interrupted } from '../helpers/agent-gone.js';
import { USER_STORYBOARD } from '../helpers/jest-project.js';
import { closedPort } from '../helpers/ports.js';
import { buildBin, repoRoot, runNode, runVitest } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'agent-start.config.ts');
const discovery = join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml');
const fixtureCli = join(repoRoot, 'fixtures', 'agent', 'cli.mjs');
const scratch = join(repoRoot, '.vitest-adcp', `agent-start-${process.pid}`);
const reporter = await builtModule('vitest/reporter');
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

describe('agent.start in vitest.config.ts (`vitest run`)', () => {
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

  it("a failing step names the agent's log, in its failure and in its record", async () => {
    const port = await closedPort();
    const pid = pidFile();
    const report = join(scratch, 'failing-report.json');
    // A passing step (caps) and a failing one (caps_wrong: expects another correlation id).
    const storyboard = join(scratch, 'failing.storyboard.yaml');
    writeFileSync(storyboard, USER_STORYBOARD);
    const run = await runVitest({
      config,
      env: { ...startEnv(recorded(pid, fixtureAgent(port)), port), E2E_STORYBOARDS: storyboard },
      reporters: [reporter],
      args: [`--outputFile.vitest-adcp=${report}`],
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(1);
    const log = `${report}.agent.log`;
    const [passing, failing] = run.tests;
    expect(failing!.state).toBe('failed');
    // Last in the details (Vitest's `diff`, printed under the headline), after the checks and the diff.
    expect(failing!.errors[0]!.diff!.endsWith(`\n\nagent log: ${log}`)).toBe(true);
    expect(run.stdout + run.stderr).toContain(`agent log: ${log}`);
    expect(failing!.meta.adcp.result.agent_log).toBe(log);
    // A passing step names no log.
    expect(passing!.meta.adcp.result.agent_log).toBeUndefined();
    const steps = JSON.stringify(JSON.parse(readFileSync(report, 'utf8')));
    expect(steps).toContain(`"agent_log":${JSON.stringify(log)}`);
    expect(steps.match(/"agent_log"/g)).toHaveLength(1);
    await expectGone(pid, port);
    expect(readFileSync(log, 'utf8')).toContain(`fixture agent: http://127.0.0.1:${port}/mcp`);
  });

  it('a command that exits at once stops the run with one line: the command, its exit code, its last output', async () => {
    const port = await closedPort();
    const run = await runVitest({
      config,
      env: startEnv(`echo 'listening soon'; echo 'Error: no such config' >&2; exit 3`, port),
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(2); // a configuration error, as the bin's (Vitest's own code for it is 1)
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
    expect(run.exitCode, output).toBe(2);
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
      const report = join(scratch, 'reused-report.json');
      // The command would fail the run if it were run.
      const run = await runVitest({
        config,
        env: startEnv('exit 7', agent.port),
        reporters: [reporter],
        args: [`--outputFile.vitest-adcp=${report}`],
      });
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(agent.callsFor('get_adcp_capabilities').length).toBeGreaterThan(before);
      expect(await connectTo(agent.port)).toBe('connected');
      // The log a failing step would name says whose output it is not.
      expect(readFileSync(`${report}.agent.log`, 'utf8')).toContain(
        `an agent already answered at http://127.0.0.1:${agent.port}/mcp when the run started, so it was used as it is`,
      );
    } finally {
      await agent.close();
    }
  });

  it('in CI an agent already answering is refused, not reused: the run stops with the fix', async () => {
    const agent = await startFixtureAgent({ port: await closedPort() });
    try {
      const run = await runVitest({ config, env: startEnv('exit 7', agent.port, { CI: 'true' }) });
      const output = run.stdout + run.stderr;
      expect(run.exitCode, output).toBe(2);
      expect(output).toContain(`an agent already answers at http://127.0.0.1:${agent.port}/mcp`);
      expect(output).toContain('agent.start.reuseExisting is false (the default when CI is set)');
      expect(await connectTo(agent.port)).toBe('connected');
    } finally {
      await agent.close();
    }
  });
});

describe('the run ends early: the agent goes with it', () => {
  const never = (pid: string) => recorded(pid, `'${process.execPath}' -e 'setInterval(() => {}, 1000)'`);

  it("SIGTERM to `vitest run` while the agent starts: the run exits, and the agent's group is gone", async () => {
    const port = await closedPort();
    const pid = pidFile();
    const vitestBin = join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
    // Spawned here, not by runNode: the config's plugin build is named by hand (test/e2e/plugin-under-test.ts).
    const env = startEnv(never(pid), port, { E2E_PLUGIN_BUILD: await builtDist() });
    const code = await interrupted([vitestBin, 'run', '--config', config], env, pid, 'SIGTERM');
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
