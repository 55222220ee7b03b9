/**
 * The bin (`npx vitest-adcp <url>`) against issue 20, case 10 c–e, as CI runs it: the built command in a child process
 * (built here as test/e2e/cli.test.ts builds it), real agents on 127.0.0.1.
 *
 * c. a JSON-RPC -32000 answered to `get_adcp_capabilities` is the agent's answer, not the user's configuration: a
 *    warning in one line and the universal storyboards (as for any answer without capabilities), not exit 2; an agent
 *    that cannot be reached stays exit 2 (test/e2e/cli.test.ts).
 * d. SIGTERM/SIGINT: the first cancels the run (Vitest's cancelCurrentRun) and the contract report is still written,
 *    with what ran and the rest `not_run`, exit 128 + the signal; a second signal exits at once.
 * e. `--auth-file <path>` / `--auth-file -` (stdin): the token reaches the agent and never the process list; --help
 *    says `--auth` is visible there.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { c as createTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { closedPort } from '../helpers/ports.js';
import { buildBin, NO_AGENT_ENV as CLEAN_ENV, repoRoot, runNode, type NodeRun } from '../helpers/run-vitest.js';
import { readJson } from '../helpers/read-json.js';

const scratch = join(repoRoot, '.vitest-adcp', `cli-reasons-${process.pid}`);
const cliJs = join(scratch, 'dist', 'cli.js');
const discovery = 'fixtures/storyboards/discovery.storyboard.yaml';

let agent: FixtureAgent;
let rpc32000: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  const [, started, hostile] = await Promise.all([buildBin(scratch), startFixtureAgent(), capabilityErrorAgent()]);
  agent = started;
  rpc32000 = hostile;
});
afterAll(async () => {
  await Promise.all([agent?.close(), rpc32000?.close()]);
  rmSync(scratch, { recursive: true, force: true });
});

function cli(...args: string[]): Promise<NodeRun> {
  return runNode([cliJs, ...args], { env: CLEAN_ENV });
}

/** The bin as a child process we can signal and feed on stdin. */
function startCli(args: string[], stdin?: string) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    GITHUB_STEP_SUMMARY: undefined,
    ...CLEAN_ENV,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined || key.startsWith('VITEST')) delete env[key];
  delete env.TEST;
  delete env.NODE_ENV;
  const child = spawn(process.execPath, [cliJs, ...args], { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(stdin ?? '');
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, at: performance.now() });
    }),
  );
  return { child, out, exited };
}

async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An MCP agent by hand whose every tools/call (get_adcp_capabilities included) answers JSON-RPC error -32000. */
async function capabilityErrorAgent() {
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    const body = await readJson(req);
    if (body?.id === undefined) return void res.writeHead(202).end();
    const send = (answer: object, headers: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer }));
    };
    if (body.method === 'initialize')
      return send(
        {
          result: {
            protocolVersion: body.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'rpc32000', version: '1.0.0' },
          },
        },
        { 'mcp-session-id': 's-1' },
      );
    if (body.method === 'tools/list')
      return send({ result: { tools: [{ name: 'get_adcp_capabilities', inputSchema: { type: 'object' } }] } });
    return send({ error: { code: -32000, message: 'Internal error: the capabilities store is down' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('c. a JSON-RPC -32000 answered to get_adcp_capabilities', () => {
  it('warns in one line and selects the universal storyboards, exit 0 (not a configuration error)', async () => {
    const run = await cli(rpc32000.url, '--list');
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const warning = run.stderr.split('\n').filter((line) => line.includes('-32000'));
    expect(warning).toEqual([
      `[vitest-adcp] get_adcp_capabilities at ${rpc32000.url} answered without capabilities ("MCP error -32000: Internal error: the capabilities store is down"): only the universal storyboards are selected, as the reference runner does.`,
    ]);
    expect(run.stderr).not.toMatch(/cannot ask the agent/);
    expect(run.stdout).toMatch(/^capability_discovery\t/m);
  });
});

/** How many calls the discovery storyboard's steps made since call `before` (the preflight's protected read aside). */
const stepsCalled = (before: number) =>
  agent.calls.slice(before).filter((call) => call.tool !== 'list_creatives').length;

describe('d. SIGTERM / SIGINT to the bin', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: the run is cancelled, the contract report written with what ran (the rest not_run), exit ${signal === 'SIGTERM' ? 143 : 130}`, async () => {
      const report = join(scratch, `interrupted-${signal}.json`);
      const before = agent.calls.length;
      const run = startCli([
        agent.urlFor(['slow_ms_3000']),
        '--storyboards',
        discovery,
        '--auth',
        'demo-cli-signals',
        '--report',
        report,
      ]);
      // The second step's call has reached the agent: the run is under way, its file collected by the worker (the run
      // host calls the first step as the workers start; the preflight's protected read, which the bin sends before
      // Vitest starts, is no step's). A file cancelled before its worker collected it has no steps to report.
      await until(() => stepsCalled(before) >= 2, 'the second call');
      const sent = performance.now();
      run.child.kill(signal);
      const exit = await run.exited;
      expect(exit.code, run.out.stdout + run.out.stderr).toBe(signal === 'SIGTERM' ? 143 : 130);
      // The step under way is aborted, the rest are not run: well under the run's own length (3 s answers).
      expect(exit.at - sent).toBeLessThan(15_000);
      expect(run.out.stderr).toContain(
        `vitest-adcp: ${signal}: cancelling the run (the calls under way are aborted, the rest are not run); the report is still written. Send it again to exit at once.`,
      );
      const written = JSON.parse(readFileSync(report, 'utf8'));
      const steps = written.storyboards.flatMap((s: any) => s.steps);
      expect(steps.length).toBeGreaterThan(2);
      expect(steps.filter((s: any) => 'not_run' in s).length).toBeGreaterThan(0);
      expect(written.summary.steps_not_run).toBeGreaterThan(0);
      expect(agent.calls.length - before).toBeLessThan(steps.length);
    });
  }

  // Issue 31 item 10: the first signal used to wait out the step in flight (the run host never heard the cancel, and
  // the engine ignored it): Vitest's close then timed out after 10 s. Now the call is aborted at once.
  it('SIGTERM does not wait out the step in flight: its call is aborted, the report is written, exit 143', async () => {
    const report = join(scratch, 'interrupted-in-flight.json');
    const before = agent.calls.length;
    const inFlight = () => agent.calls.slice(before).some((call) => call.tool === 'list_creative_formats');
    const run = startCli([
      agent.urlFor(['slow_ms_20000@list_creative_formats']),
      '--storyboards',
      discovery,
      '--auth',
      'demo-cli-signals',
      '--report',
      report,
    ]);
    await until(inFlight, 'the slow call');
    const sent = performance.now();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(exit.code, run.out.stdout + run.out.stderr).toBe(143);
    // The answer is 20 s away; Vitest's close timeout (10 s) is what a call still under way used to cost.
    expect(exit.at - sent).toBeLessThan(6_000);
    expect(run.out.stderr).not.toContain('close timed out');
    // Written (what it lists depends on how far the worker got: the host runs ahead of the tests).
    expect(JSON.parse(readFileSync(report, 'utf8')).summary).toBeDefined();
    expect(agent.calls.slice(before).filter((call) => call.tool === 'list_creative_formats')).toHaveLength(1);
  });

  it('a second signal exits at once', async () => {
    const report = join(scratch, 'interrupted-twice.json');
    const before = agent.calls.length;
    const run = startCli([
      agent.urlFor(['slow_ms_8000']),
      '--storyboards',
      discovery,
      '--auth',
      'demo-cli-signals',
      '--report',
      report,
    ]);
    await until(() => stepsCalled(before) >= 1, 'the first call');
    run.child.kill('SIGTERM');
    await until(() => run.out.stderr.includes('cancelling the run'), 'the first signal to be taken');
    const second = performance.now();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(exit.code, run.out.stdout + run.out.stderr).toBe(143);
    // Not the 8 s the step under way would take.
    expect(exit.at - second).toBeLessThan(3_000);
  });
});

describe('e. the token off the process list: --auth-file', () => {
  it('--auth-file - reads the token from stdin: the agent gets it, the process list never shows it', async () => {
    const token = 'demo-from-stdin-5a1e';
    const before = agent.calls.length;
    const report = join(scratch, 'stdin-token.json');
    const run = startCli([agent.url, '--storyboards', discovery, '--auth-file', '-', '--report', report], `${token}\n`);
    await until(() => agent.calls.length > before, 'the first call');
    const cmdline = readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('--auth-file');
    expect(cmdline).not.toContain(token);
    const exit = await run.exited;
    expect(exit.code, run.out.stdout + run.out.stderr).toBe(0);
    const calls = agent.calls.slice(before);
    // The steps that use the operator's token (one step authenticates with the test kit's key instead).
    expect(calls.filter((c) => c.principal === `key:${token}`).length).toBeGreaterThan(1);
  });

  it('--auth-file <path>: the token from the file (its final newline dropped)', async () => {
    const file = join(scratch, 'token.txt');
    writeFileSync(file, 'demo-from-file-77\n', { mode: 0o600 });
    const before = agent.calls.length;
    const run = await cli(agent.url, '--storyboards', discovery, '--auth-file', file);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(agent.calls.slice(before).some((c) => c.principal === 'key:demo-from-file-77')).toBe(true);
  });

  it.each([
    [
      '--auth and --auth-file together',
      ['--auth', 'x', '--auth-file', 'token.txt'],
      /--auth and --auth-file both give the bearer token: give one/,
    ],
    [
      'a missing file',
      ['--auth-file', 'no-such-token.txt'],
      /--auth-file no-such-token\.txt: cannot read it \(ENOENT\)/,
    ],
    ['an empty file', ['--auth-file', 'EMPTY'], /--auth-file .* is empty: it must hold the bearer token, on one line/],
  ])('%s: a usage error (exit 2)', async (_, args, message) => {
    const empty = join(scratch, 'empty.txt');
    writeFileSync(empty, '\n');
    const run = await cli('http://127.0.0.1:1/mcp', ...args.map((a) => (a === 'EMPTY' ? empty : a)));
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it('--help says --auth is visible in the process list and --auth-file / the env are not', async () => {
    const run = await cli('--help');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(
      /--auth <token>[^\n]*\n[^\n]*Visible to other local users in the process list\n[^\n]*\(ps\) for the whole run: prefer --auth-file or the env/,
    );
    expect(run.stdout).toMatch(
      /--auth-file <path>\s+read the bearer token from this file, or from stdin\n\s+with `--auth-file -` \(one line; neither it nor env\n\s+ADCP_AUTH_TOKEN shows in the process list\)/,
    );
  });
});

describe("an agent whose adcp.supported_versions leave out the corpus's release (issue 30)", () => {
  it('stops the run before anything runs with one line, exit 2; --allow-unsupported-version runs it', async () => {
    const url = agent.urlFor(['speaks_3_1']);
    const [refused, anyway, speaks] = await Promise.all([
      cli(url, '--list'),
      cli(url, '--list', '--allow-unsupported-version'),
      cli(agent.urlFor(['speaks_3_0']), '--list'),
    ]);
    expect(refused.exitCode, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stdout).toBe('');
    const lines = refused.stderr.split('\n').filter(Boolean);
    expect(lines).toEqual([
      expect.stringContaining('the compliance corpus is AdCP 3.0.6, and the agent does not speak it'),
    ]);
    expect(lines[0]).toContain('adcp.supported_versions ["3.1"]');
    expect(lines[0]).toContain('--allow-unsupported-version');
    for (const run of [anyway, speaks]) {
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^capability_discovery\t/m);
    }
  });
});

describe('--compliance-version <a published version the SDK lacks>: fetched from ADCP_BASE_URL (issue 30)', () => {
  const V = '9.9.2';
  let bundle: Buffer;
  let published: { base: string; digest: string; close: () => Promise<void> };

  beforeAll(async () => {
    const stage = join(scratch, 'publish', `adcp-${V}`);
    const files: Record<string, string> = {
      'compliance/index.json': JSON.stringify({ adcp_version: V }),
      'compliance/universal/tiny-one.yaml': 'id: tiny_one\ntitle: Tiny\ntrack: core\nphases: []\n',
      'schemas/manifest.json': JSON.stringify({ adcp_version: V, tools: {} }),
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(stage, path, '..'), { recursive: true });
      writeFileSync(join(stage, path), text);
    }
    const tgz = join(scratch, 'publish', 'bundle.tgz');
    await createTar({ gzip: true, cwd: join(scratch, 'publish'), file: tgz }, [`adcp-${V}`]);
    bundle = readFileSync(tgz);
    let digest = createHash('sha256').update(bundle).digest('hex');
    const server = http.createServer((req, res) => {
      if (req.url === `/protocol/${V}.tgz`) res.end(bundle);
      else if (req.url === `/protocol/${V}.tgz.sha256`) res.end(`${digest}  ${V}.tgz\n`);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    published = {
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      get digest() {
        return digest;
      },
      set digest(value: string) {
        digest = value;
      },
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  });
  afterAll(() => published?.close());

  const fetchEnv = (cache: string) => ({ ...CLEAN_ENV, XDG_CACHE_HOME: cache, ADCP_BASE_URL: published.base });

  it('a wrong checksum: exit 2, one line saying so, nothing unpacked', async () => {
    const cache = join(scratch, 'xdg-bad');
    const right = published.digest;
    published.digest = '0'.repeat(64);
    try {
      const run = await runNode([cliJs, agent.url, '--compliance-version', V, '--storyboards', 'tiny_one', '--list'], {
        env: fetchEnv(cache),
      });
      expect(run.exitCode, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toMatch(
        new RegExp(
          `AdCP ${V} from ${published.base}/protocol/${V}\\.tgz does not match its \\.sha256 .*nothing was unpacked`,
        ),
      );
      expect(existsSync(join(cache, 'vitest-adcp', 'corpora', `adcp-${V}`))).toBe(false);
    } finally {
      published.digest = right;
    }
  });

  it('lists its storyboards from the per-user cache, says which corpus and why; the second run is offline', async () => {
    const cache = join(scratch, 'xdg-good');
    const first = await runNode([cliJs, agent.url, '--compliance-version', V, '--storyboards', 'tiny_one', '--list'], {
      env: fetchEnv(cache),
    });
    expect(first.exitCode, first.stdout + first.stderr).toBe(0);
    expect(first.stderr).toContain(`fetching AdCP ${V} from ${published.base}/protocol/${V}.tgz`);
    const tree = join(cache, 'vitest-adcp', 'corpora', `adcp-${V}`, 'compliance');
    expect(first.stdout).toMatch(
      /^tiny_one\t.*corpora\/adcp-9\.9\.2\/compliance\/universal\/tiny-one\.yaml\t--storyboards tiny_one$/m,
    );
    expect(first.stdout).toContain(
      `corpus: AdCP ${V} compliance corpus (named, fetched from ${published.base}/protocol/${V}.tgz, kept in the per-user cache)`,
    );
    expect(existsSync(join(tree, 'index.json'))).toBe(true);
    // Offline: a base nobody answers at.
    const second = await runNode([cliJs, agent.url, '--compliance-version', V, '--storyboards', 'tiny_one', '--list'], {
      env: { ...fetchEnv(cache), ADCP_BASE_URL: `http://127.0.0.1:${await closedPort()}` },
    });
    expect(second.exitCode, second.stdout + second.stderr).toBe(0);
    expect(second.stderr).not.toContain('fetching');
    expect(second.stdout).toMatch(/^tiny_one\t/m);
  });
});

describe("a corpus without the JSON Schemas of its version (issue 30: never another version's schemas)", () => {
  it('stops the run with one line naming the corpus and the fix, exit 2, nothing run', async () => {
    const tree = join(scratch, 'no-schemas', 'compliance');
    mkdirSync(join(tree, 'universal'), { recursive: true });
    writeFileSync(join(tree, 'index.json'), JSON.stringify({ adcp_version: '9.9.3' }));
    writeFileSync(join(tree, 'universal', 'tiny-one.yaml'), 'id: tiny_one\ntitle: Tiny\ntrack: core\nphases: []\n');
    const run = await cli(agent.url, '--compliance-version', tree, '--storyboards', 'tiny_one');
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `the compliance corpus at ${tree} is AdCP 9.9.3, and no JSON Schemas of that version were found`,
    );
    expect(run.stderr).toContain("a corpus is never graded with another version's schemas");
    expect(run.stdout).not.toMatch(/passed|failed/);
  });
});
