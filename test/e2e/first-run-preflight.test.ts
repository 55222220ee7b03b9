/**
 * The first run, as a new user meets it (issue 21, items 1–3), in real child `vitest` processes with the plugin:
 *
 * - listing needs no agent: `vitest list --json` without ADCP_AGENT_URL lists the user's own test and every
 *   storyboard step at its YAML line, exit 0 (IDE explorers collect the same way, without the shell's environment);
 * - `--project vitest-adcp` runs the storyboards alone, `--project '!vitest-adcp'` the user's tests alone;
 * - a wrong token, an agent that wants one when none is set, and an agent that cannot be reached stop the run once,
 *   before any step, with the fix — and a run of storyboards that test anonymous access is not stopped.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { closedPort } from '../helpers/ports.js';
import { repoRoot, runNode, runVitest } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
const vitestBin = join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
const discovery = join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml');
const authStoryboard = join(repoRoot, 'fixtures', 'storyboards', 'auth.storyboard.yaml');
const unitTest = join(repoRoot, 'test', 'e2e', 'project', 'import-storyboard.test.ts');
/** No agent, no token: what an IDE's test explorer, or a shell without the variables, has. */
const NO_AGENT = {
  ADCP_AGENT_URL: undefined,
  ADCP_AUTH_TOKEN: undefined,
  ADCP_PROTOCOL: undefined,
  ADCP_COMPLIANCE: undefined,
};
const TOKEN_MESSAGE = 'Pass `--auth` / `--auth-file` or set `ADCP_AUTH_TOKEN`';

describe('listing needs no agent', () => {
  it('`vitest list --json` without ADCP_AGENT_URL lists the unit test and every storyboard step at its YAML line, exit 0', async () => {
    const run = await runNode([vitestBin, 'list', '--json', '--config', config], {
      env: { ...NO_AGENT, E2E_TS_TESTS: '1', E2E_STORYBOARDS: discovery },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as {
      name: string;
      file: string;
      projectName?: string;
      location?: { line: number; column: number };
    }[];
    expect(listed.find((t) => t.file === unitTest)).toMatchObject({
      name: 'imports a validated, typed storyboard',
      location: { line: 7 },
    });
    const steps = listed.filter((t) => t.file === discovery);
    // The step ids of discovery.storyboard.yaml at the lines of their `- id:` (vitest-run.test.ts reads the same lines).
    expect(steps.map((t) => [t.name.replace(/^.*\((\w+)\)$/, '$1'), t.location?.line, t.projectName])).toEqual([
      ['get_capabilities', 49, 'vitest-adcp'],
      ['list_display_formats', 95, 'vitest-adcp'],
      ['list_formats_first_page', 135, 'vitest-adcp'],
      ['list_formats_second_page', 173, 'vitest-adcp'],
    ]);
    expect(run.stderr).not.toMatch(/ConfigurationError|no agent to test/);
  });

  it('`vitest list --filesOnly` with compliance.fromCapabilities and no agent: the static selection, one warning, exit 0; a run stops', async () => {
    const env = {
      ...NO_AGENT,
      E2E_TS_TESTS: '1',
      E2E_FROM_CAPABILITIES: '1',
      E2E_CORPUS: 'capability_discovery',
      E2E_STORYBOARDS: discovery,
    };
    const list = await runNode([vitestBin, 'list', '--filesOnly', '--config', config], { env });
    expect(list.exitCode, list.stderr).toBe(0);
    const files = list.stdout.split('\n').filter(Boolean);
    expect(files.some((f) => f.endsWith('universal/capability-discovery.yaml'))).toBe(true);
    expect(files.some((f) => f.endsWith('discovery.storyboard.yaml'))).toBe(true);
    expect(files.some((f) => f.endsWith('import-storyboard.test.ts'))).toBe(true);
    expect(
      list.stderr.match(
        /compliance\.fromCapabilities: no storyboards selected from the agent's capabilities, because no agent to test/g,
      ),
    ).toHaveLength(1);

    const run = await runVitest({ config, env: { ...env, E2E_STORYBOARDS: '', E2E_CORPUS: '' } });
    expect(run.exitCode).toBe(1);
    expect(
      (run.stdout + run.stderr).match(
        /compliance\.fromCapabilities asks the agent which storyboards apply, but no agent to test/g,
      ),
    ).toHaveLength(1);
    expect(run.tests).toEqual([]);
  });

  it("a run filtered to the user's own files is never stopped by the missing agent", async () => {
    const run = await runVitest({
      config,
      env: { ...NO_AGENT, E2E_TS_TESTS: '1', E2E_STORYBOARDS: discovery, E2E_FROM_CAPABILITIES: '1' },
      args: ['test/e2e/project'],
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.tests.map((t) => [t.module, t.state])).toEqual([[unitTest, 'passed']]);
  });

  it('a run with storyboards and no agent stops once, before anything runs, without claiming there are no test files', async () => {
    const run = await runVitest({ config, env: { ...NO_AGENT, E2E_TS_TESTS: '1', E2E_STORYBOARDS: discovery } });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).toBe(1);
    expect(output.match(/no agent to test: set ADCP_AGENT_URL/g)).toHaveLength(1);
    expect(output).not.toContain('No test files found');
    expect(run.tests).toEqual([]);
  });
});

describe('--project', () => {
  const env = () => ({
    ADCP_AGENT_URL: inject('agentUrl'),
    ADCP_AUTH_TOKEN: undefined,
    E2E_TS_TESTS: '1',
    E2E_STORYBOARDS: discovery,
  });

  it('`--project vitest-adcp` runs exactly the storyboards', async () => {
    const run = await runVitest({ config, env: env(), args: ['--project', 'vitest-adcp'] });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(new Set(run.tests.map((t) => t.module))).toEqual(new Set([discovery]));
    expect(run.tests).toHaveLength(4);
    expect(
      run.tests.every((t) => t.state === 'passed' && t.project.name === 'vitest-adcp' && t.project.isolate === false),
    ).toBe(true);
  });

  it("`--project '!vitest-adcp'` runs exactly the user's tests, and asks no agent", async () => {
    // An unreachable agent, and capability selection asked for: a storyboard run (or a selection made at startup)
    // would stop on it, so the run passing shows none was involved.
    const run = await runVitest({
      config,
      env: { ...env(), ADCP_AGENT_URL: `http://127.0.0.1:${await closedPort()}/mcp`, E2E_FROM_CAPABILITIES: '1' },
      args: ['--project', '!vitest-adcp'],
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.tests.map((t) => [t.module, t.state])).toEqual([[unitTest, 'passed']]);
  });

  it('with no filter both halves run', async () => {
    const run = await runVitest({ config, env: env() });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(new Set(run.tests.map((t) => t.module))).toEqual(new Set([discovery, unitTest]));
  });
});

describe("the run's credential and the agent's reachability, checked once before any step", () => {
  let agent: FixtureAgent;
  /** A gateway that wants a Bearer token on every request, the MCP handshake included. */
  let gateway: Server;
  let gatewayUrl: string;
  beforeAll(async () => {
    agent = await startFixtureAgent();
    gateway = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="gateway"' });
        res.end('{"error":"unauthorized"}');
      });
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    gatewayUrl = `http://127.0.0.1:${(gateway.address() as { port: number }).port}/mcp`;
  });
  afterAll(async () => {
    await agent?.close();
    await new Promise<void>((r) => gateway.close(() => r()));
  });

  it('a wrong token stops the run once with the mechanism and the fix, no step runs, the agent sees one call', async () => {
    agent.resetCalls();
    const run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: agent.url,
        ADCP_AUTH_TOKEN: 'not-a-demo-key',
        E2E_TS_TESTS: '1',
        E2E_STORYBOARDS: `${discovery},${authStoryboard}`,
      },
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).toBe(1);
    expect(output.match(/rejected the configured token/g)).toHaveLength(1);
    expect(output).toContain(
      `ConfigurationError: vitest-adcp cannot run the storyboards: the agent at ${agent.url} rejected the configured token (list_creatives answered HTTP 401, AUTH_REQUIRED; it asks for Bearer (OAuth: a token from the authorization server its resource metadata names) or Basic). ${TOKEN_MESSAGE}`,
    );
    expect(output).toContain('docs/troubleshooting.md#the-agent-rejects-the-credential-or-cannot-be-reached');
    expect(output).not.toContain('not-a-demo-key');
    expect(run.tests).toEqual([]);
    expect(agent.calls.map((c) => c.tool)).toEqual(['list_creatives']);
  });

  it('no token for an agent that wants one at the door stops the run once, naming its scheme', async () => {
    const run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: gatewayUrl, ADCP_AUTH_TOKEN: undefined, E2E_STORYBOARDS: discovery },
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).toBe(1);
    expect(output.match(/requires authentication and no token is configured/g)).toHaveLength(1);
    expect(output).toContain(
      `the agent at ${gatewayUrl} requires authentication and no token is configured (get_adcp_capabilities answered HTTP 401; it asks for Bearer). ${TOKEN_MESSAGE}`,
    );
    expect(run.tests).toEqual([]);
  });

  it('an agent that cannot be reached stops the run once, naming the URL and the error', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: url, ADCP_AUTH_TOKEN: undefined, E2E_STORYBOARDS: discovery },
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).toBe(1);
    expect(output.match(/cannot be reached/g)).toHaveLength(1);
    expect(output).toMatch(
      new RegExp(`the agent at ${url.replace(/\./g, '\\.')} cannot be reached \\(connect ECONNREFUSED`),
    );
    expect(run.tests).toEqual([]);
  });

  it('storyboards that test anonymous access still run, with no token and with a valid one', async () => {
    for (const token of [undefined, 'demo-first-run']) {
      const run = await runVitest({
        config,
        env: {
          ADCP_AGENT_URL: agent.url,
          ADCP_AUTH_TOKEN: token,
          E2E_STORYBOARDS: authStoryboard,
          E2E_CORPUS: 'security_baseline',
        },
      });
      expect(run.exitCode, `${token}\n${run.stdout}${run.stderr}`).toBe(0);
      const modules = new Set(run.tests.map((t) => t.module));
      expect(modules.has(authStoryboard)).toBe(true);
      expect([...modules].some((m) => m.endsWith('universal/security.yaml'))).toBe(true);
      expect(run.tests.filter((t) => t.state === 'failed')).toEqual([]);
    }
  });
});
