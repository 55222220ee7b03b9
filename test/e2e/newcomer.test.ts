/**
 * Issue 21's newcomer, walked through in a fresh repository: `npm init -y` (a CommonJS package), the packed tarball
 * installed beside vitest and @adcp/sdk, the README's quick-start config under the name the README gives a CommonJS
 * project, a unit test of the user's own, and a storyboard written by `npx vitest-adcp init`. Each first-run mistake
 * the issue lists is made on purpose, and the test asserts its one message, its exit status and, for storyboard
 * mistakes, its `file:line:col`:
 *
 *  1. a wrong token (plugin and bin): the run stops once, naming the mechanism and the fix, the token never printed;
 *  2. no ADCP_AGENT_URL: `vitest list --json` still lists every test and step with its YAML line; a run stops once;
 *  3. `--project vitest-adcp` / `--project '!vitest-adcp'` each run exactly their half;
 *  4. createAdcpClient and the matchers under Jest 30 on Node 20: test/e2e/jest-client.test.ts (a packed install too);
 *  5. typos in a task name, a `$context` placeholder, a path, a sample_request: load errors located at the token;
 *  9. the bin: `--version`, Vitest flags after `--`, a dead agent is exit 2, `--report-html` alone.
 *
 * And issue 31's cases a user meets through the bin: a `-t` filtered run (item 4), load errors before an unreachable
 * agent (item 5), a 40 MB storyboard never read whole (item 6; each process's peak RSS through
 * test/helpers/rss-probe.mjs). test/e2e/load-first.test.ts has item 5 under `vitest run`. Issue 33's `agent.start` with an
 * @adcp/sdk example seller, under `npx vitest run` and the bin's `--start`, with `watch` under `vitest --watch`, and a
 * command that exits at once or never becomes ready under each: one line, exit 2 (test/e2e/agent-start.test.ts and
 * agent-start-watch.test.ts have its other cases, on the fixture agent).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PASSING_STORYBOARD } from '../helpers/jest-project.js';
import { installedProject } from '../helpers/installed.js';
import { expectGone, groupAlive, groupOf } from '../helpers/agent-gone.js';
import { closedPort } from '../helpers/ports.js';
import { SDK_SELLER, sellerCommand } from '../helpers/sdk-seller.js';
import { repoRoot } from '../helpers/run-vitest.js';

const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
/** The quick start's config, as a newcomer copies it. */
const quickStartConfig = /```ts\n\/\/ vitest\.config\.ts\n([\s\S]*?)```/.exec(readme)![1]!;
/** The name the README tells a CommonJS project to give it. */
const cjsConfigName = /In a CommonJS project[^]*?name the\s+file `([^`]+)`/.exec(readme)![1]!;
const TOKEN = 'demo-newcomer-v1';
const TOKEN_FIX = 'Pass `--auth` / `--auth-file` or set `ADCP_AUTH_TOKEN`';
/** What Vitest's watch mode prints after each run. */
const WAITING = 'Waiting for file changes';

let dir: string;
let project: string;

/** A shell without this run's variables: only what the newcomer sets. */
function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', GITHUB_STEP_SUMMARY: '' };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key.startsWith('ADCP_')) delete env[key];
  delete env.NODE_ENV;
  delete env.TEST;
  for (const [key, value] of Object.entries(extra))
    if (value === undefined) delete env[key];
    else env[key] = value;
  return env;
}

function npx(args: string[], env: Record<string, string | undefined> = {}) {
  const result = spawnSync('npx', args, { cwd: project, env: cleanEnv(env), encoding: 'utf8', timeout: 150_000 });
  return { status: result.status, stdout: result.stdout, output: result.stdout + result.stderr };
}

const agent = () => ({ ADCP_AGENT_URL: inject('agentUrl'), ADCP_AUTH_TOKEN: TOKEN });

/** The 1-based line and column of the first occurrence of `token` in `text`. */
function at(text: string, token: string): string {
  const index = text.indexOf(token);
  expect(index, token).toBeGreaterThanOrEqual(0);
  const before = text.slice(0, index).split('\n');
  return `${before.length}:${before.at(-1)!.length + 1}`;
}

/**
 * `vitest.start.config.mts`: agent.start from the environment (START_URL, START_COMMAND, START_PORT for the seller,
 * START_TIMEOUT, default 90 s; START_WATCH, comma-separated globs) and the one corpus storyboard the seller passes.
 */
function writeStartConfig(): void {
  writeFileSync(
    join(project, 'vitest.start.config.mts'),
    [
      "import { defineConfig } from 'vitest/config';",
      "import { adcpStoryboards } from 'vitest-adcp';",
      'export default defineConfig({',
      '  plugins: [',
      '    adcpStoryboards({',
      '      agent: {',
      '        url: process.env.START_URL,',
      "        start: { command: process.env.START_COMMAND!, env: { PORT: process.env.START_PORT ?? '', NODE_ENV: 'development' }, timeoutMs: Number(process.env.START_TIMEOUT ?? 90_000), ...(process.env.START_WATCH ? { watch: process.env.START_WATCH.split(',') } : {}) },",
      '      },',
      "      compliance: { storyboards: ['capability_discovery'] },",
      // Only the corpus storyboard: the repository's own storyboards (the other cases' broken and failing ones) stay out.
      '      include: [],',
      '    }),',
      '  ],',
      '  test: { include: [] },',
      '});',
      '',
    ].join('\n'),
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-newcomer-'));
  project = join(dir, 'my-agent');
  // `npm init -y` (a CommonJS package), then the README's install line, with our tarball for vitest-adcp and the
  // versions we test with: made once per test run and copied here (test/helpers/installed.ts), as packed.test.ts's.
  await installedProject(project);
  writeFileSync(join(project, cjsConfigName), quickStartConfig);
  mkdirSync(join(project, 'test'));
  writeFileSync(
    join(project, 'test', 'unit.test.mjs'),
    "import { expect, it } from 'vitest';\nit('adds', () => expect(1 + 1).toBe(2));\n",
  );
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a newcomer repository', () => {
  it('`npx vitest-adcp init` writes a starter storyboard, refuses to overwrite it, and the storyboard passes on the agent', () => {
    const init = npx(['vitest-adcp', 'init']);
    expect(init.status, init.output).toBe(0);
    expect(existsSync(join(project, 'agent.storyboard.yaml'))).toBe(true);
    const again = npx(['vitest-adcp', 'init']);
    expect(again.status, again.output).toBe(2);
    const run = npx(['vitest', 'run', 'agent.storyboard.yaml'], agent());
    expect(run.status, run.output).toBe(0);
    expect(run.output).not.toMatch(/ESM syntax in a file loaded as CommonJS/);
    expect(run.output).toMatch(/Tests\s+\d+ passed \(\d+\)/);
  }, 240_000);

  it('item 2: with no ADCP_AGENT_URL, `vitest list --json` lists the unit test and every storyboard step at its YAML line; a run stops once', () => {
    const list = npx(['vitest', 'list', '--json']);
    expect(list.status, list.output).toBe(0);
    const listed = JSON.parse(list.stdout) as { name: string; file: string; location?: { line: number } }[];
    expect(listed.some((t) => t.file.endsWith('test/unit.test.mjs') && t.name === 'adds')).toBe(true);
    const yaml = readFileSync(join(project, 'agent.storyboard.yaml'), 'utf8');
    const steps = listed.filter((t) => t.file.endsWith('agent.storyboard.yaml'));
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps) {
      const id = /\((\w+)\)$/.exec(step.name)![1]!;
      expect(step.location?.line, step.name).toBe(Number(at(yaml, `- id: ${id}`).split(':')[0]));
    }
    expect(listed.some((t) => t.file.endsWith('universal/capability-discovery.yaml'))).toBe(true);

    const run = npx(['vitest', 'run']);
    expect(run.status).toBe(1);
    expect(run.output.match(/set ADCP_AGENT_URL/g), run.output).toHaveLength(1);
    expect(run.output).not.toContain('No test files found');
  }, 240_000);

  it("item 3: `--project '!vitest-adcp'` runs only the user's tests (no agent needed), `--project vitest-adcp` only the storyboards", () => {
    const own = npx(['vitest', 'run', '--project', '!vitest-adcp']);
    expect(own.status, own.output).toBe(0);
    expect(own.output).toMatch(/Tests\s+1 passed \(1\)/);
    const storyboards = npx(['vitest', 'run', '--project', 'vitest-adcp', '--reporter=verbose'], agent());
    expect(storyboards.status, storyboards.output).toBe(0);
    expect(storyboards.output).not.toMatch(/unit\.test\.mjs/);
    expect(storyboards.output).toMatch(/agent\.storyboard\.yaml/);
  }, 240_000);

  it('item 1: a wrong token stops the run once, naming the mechanism and the fix, and the token is never printed (plugin and bin)', () => {
    const wrong = 'wrong-newcomer-token';
    const run = npx(['vitest', 'run'], { ...agent(), ADCP_AUTH_TOKEN: wrong });
    expect(run.status).toBe(1);
    expect(run.output.match(new RegExp(TOKEN_FIX.replace(/[`/]/g, '.'), 'g')), run.output).toHaveLength(1);
    expect(run.output).toMatch(/Bearer/);
    expect(run.output).not.toContain(wrong);
    expect(run.output).not.toMatch(/Tests\s+\d+ failed/);

    const bin = npx(['vitest-adcp', inject('agentUrl'), '--storyboards', 'capability_discovery'], {
      ADCP_AUTH_TOKEN: wrong,
    });
    expect(bin.status, bin.output).toBe(2);
    expect(bin.output.match(new RegExp(TOKEN_FIX.replace(/[`/]/g, '.'), 'g')), bin.output).toHaveLength(1);
    expect(bin.output).not.toContain(wrong);
  }, 240_000);

  it('item 5: typos in a task, a $context placeholder, a path and a sample_request are load errors at the token, before any call', () => {
    const yaml = [
      'id: my_typos',
      'title: My typos',
      'phases:',
      '  - id: discovery',
      '    steps:',
      '      - id: caps',
      '        title: Capabilities',
      '        task: get_adcp_capabilites',
      '      - id: caps_again',
      '        title: Capabilities again',
      '        task: get_adcp_capabilities',
      '        sample_request:',
      '          context: { correlation_id: "$context.corelation" }',
      '        validations:',
      '          - check: field_present',
      '            path: adcp..major_versions',
      '      - id: products',
      '        title: Products',
      '        task: get_products',
      '        sample_request:',
      '          brief: coffee',
      '          buying_mode: wholesale_please',
      '',
    ].join('\n');
    writeFileSync(join(project, 'typos.storyboard.yaml'), yaml);
    try {
      const run = npx(['vitest', 'run', 'typos.storyboard.yaml'], agent());
      expect(run.status).toBe(1);
      for (const [rule, token] of [
        ['misspelled_task', 'get_adcp_capabilites'],
        ['unknown_context_reference', '$context.corelation'],
        ['path_syntax', 'adcp..major_versions'],
        ['sample_request_schema', 'wholesale_please'],
      ] as const) {
        expect(run.output, rule).toContain(`typos.storyboard.yaml:${at(yaml, token)}: [${rule}]`);
      }
      expect(run.output).toMatch(/did you mean "get_adcp_capabilities"/);
      // Nothing ran: the file failed to load, so no step of it reached the agent.
      expect(run.output).not.toMatch(/Capabilities again \(caps_again\)/);
    } finally {
      rmSync(join(project, 'typos.storyboard.yaml'));
    }
  }, 240_000);

  it('item 9: the bin has --version, passes Vitest flags after --, writes --report-html alone, and a dead agent is exit 2 with one message', async () => {
    const version = npx(['vitest-adcp', '--version']);
    expect(version.status, version.output).toBe(0);
    expect(version.output).toContain(pkg.version);

    const one = npx(
      [
        'vitest-adcp',
        inject('agentUrl'),
        '--storyboards',
        'capability_discovery',
        '--report-html',
        'report.html',
        '--',
        '-t',
        '\\(get_capabilities\\)',
      ],
      { ADCP_AUTH_TOKEN: TOKEN },
    );
    expect(one.status, one.output).toBe(0);
    expect(one.output).toMatch(/Tests\s+1 passed \| \d+ skipped/);
    expect(readFileSync(join(project, 'report.html'), 'utf8')).toMatch(/<html/i);

    const dead = `http://127.0.0.1:${await closedPort()}/mcp`;
    const down = npx(['vitest-adcp', dead, '--storyboards', 'capability_discovery'], { ADCP_AUTH_TOKEN: TOKEN });
    expect(down.status, down.output).toBe(2);
    expect(down.output.match(/ECONNREFUSED/g), down.output).toHaveLength(1);
    expect(down.output).not.toMatch(/Tests\s+\d+ failed/);
  }, 240_000);

  it('issue 31 item 5: load errors come first, then the unreachable agent in one line for the files that load', async () => {
    copyFileSync(
      join(repoRoot, 'fixtures', 'broken', 'misspelled-task.storyboard.yaml'),
      join(project, 'misspelt.storyboard.yaml'),
    );
    // A storyboard that loads (the packed-package tests' passing one).
    writeFileSync(join(project, 'caps.storyboard.yaml'), PASSING_STORYBOARD);
    const loadError =
      'misspelt.storyboard.yaml:9:15: [misspelled_task] task "get_adcp_capabilites" in step "caps" is not an AdCP or runner task';
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const both = npx(['vitest-adcp', url, '--storyboards', 'misspelt.storyboard.yaml,caps.storyboard.yaml'], {
      ADCP_AUTH_TOKEN: TOKEN,
    });
    expect(both.status, both.output).toBe(2);
    const order = [
      'vitest-adcp: 1 of 2 storyboard files does not load (load errors need no agent: fix them first):',
      loadError,
      `vitest-adcp cannot run the 1 storyboard file that loads: the agent at ${url} cannot be reached (connect ECONNREFUSED`,
    ].map((text) => both.output.indexOf(text));
    expect(
      order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)),
      both.output,
    ).toBe(true);
    expect(both.output.match(/cannot be reached/g)).toHaveLength(1);
    expect(both.output).not.toMatch(/Unhandled Error|^\s+at /m);
    // No file loads: no agent needed; the load error fails its test, and there is no agent line.
    const none = npx(['vitest-adcp', url, '--storyboards', 'misspelt.storyboard.yaml'], { ADCP_AUTH_TOKEN: TOKEN });
    expect(none.status, none.output).toBe(1);
    expect(none.output).toContain('loads without errors (misspelled_task)');
    expect(none.output).not.toMatch(/cannot be reached/);
  }, 120_000);

  it('issue 31 item 6: a 40 MB storyboard named to the bin is never read whole: --list and the run stay small', () => {
    const head =
      'id: big_one\nversion: "1.0.0"\ntitle: T\ncategory: x\nsummary: s\nnarrative: n\nagent:\n  interaction_model: media_buy_seller\ncaller:\n  role: buyer_agent\nphases:\n  - id: p\n    title: P\n    steps:\n      - { id: s, title: S, task: get_products }\nx-filler:\n';
    writeFileSync(
      join(project, 'big.storyboard.yaml'),
      head + '  - "0123456789012345678901234567890123456789012345678901234567890123456789"\n'.repeat(530_000),
    );
    /** The bin with every process's peak RSS written down (VmHWM); the largest, in MB. */
    const withPeak = (args: string[]) => {
      const probes = mkdtempSync(join(dir, 'rss-'));
      const run = npx(['vitest-adcp', inject('agentUrl'), ...args], {
        ADCP_AUTH_TOKEN: TOKEN,
        RSS_PROBE_DIR: probes,
        NODE_OPTIONS: `--import=${join(repoRoot, 'test', 'helpers', 'rss-probe.mjs')}`,
      });
      const peaks = readdirSync(probes)
        .filter((f) => /^\d+\.json$/.test(f))
        .map((f) => (JSON.parse(readFileSync(join(probes, f), 'utf8')) as { peakKiB: number }).peakKiB);
      expect(peaks.length, run.output).toBeGreaterThan(0);
      return { run, peakMB: Math.max(...peaks) / 1024 };
    };
    // Before: 1.75 GB for --list, 1.6 GB for the run (selection read and parsed the file whole to learn its id).
    const list = withPeak(['--list', '--storyboards', 'big.storyboard.yaml']);
    expect(list.run.status, list.run.output).toBe(0);
    expect(list.run.stdout).toMatch(/^big_one\t.*big\.storyboard\.yaml\t--storyboards /m);
    expect(list.peakMB).toBeLessThan(200); // measured 60–70 MB
    const run = withPeak(['--storyboards', 'big.storyboard.yaml']);
    expect(run.run.status, run.run.output).toBe(1);
    expect(run.run.output).toContain('loads without errors (storyboard_bound)');
    expect(run.run.output).toMatch(
      /\[storyboard_bound\] the storyboard file is \d{8} bytes, over the bound maxBytes = 524288 bytes/,
    );
    // Measured ~280 MB: Vitest itself reads each test file whole once (hostile-yaml.test.ts says where); nothing of ours does.
    expect(run.peakMB).toBeLessThan(500);
    rmSync(join(project, 'big.storyboard.yaml'));
  }, 180_000);

  it('issue 33: an @adcp/sdk example seller started through agent.start passes a storyboard, and nothing of it is left after the run', async () => {
    const port = await closedPort();
    const pidFile = join(dir, 'seller.pid');
    writeStartConfig();
    const run = npx(['vitest', 'run', '--config', 'vitest.start.config.mts'], {
      START_URL: `http://127.0.0.1:${port}/mcp`,
      START_COMMAND: sellerCommand(pidFile),
      START_PORT: String(port),
      ADCP_AUTH_TOKEN: 'sk_harness_do_not_use_in_prod',
    });
    expect(run.status, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+2 passed \(2\)/);
    // Nothing left: no process of the agent's group, nothing listening on its port.
    await expectGone(pidFile, port);
  }, 180_000);

  it('issue 33: the same seller through `npx vitest-adcp <url> --start "<command>"`', async () => {
    const port = await closedPort();
    const pidFile = join(dir, 'seller-bin.pid');
    // The bin has no env option for the agent: the command sets what the seller reads.
    const command = `PORT=${port} NODE_ENV=development; export PORT NODE_ENV; ${sellerCommand(pidFile)}`;
    const run = npx(
      [
        'vitest-adcp',
        `http://127.0.0.1:${port}/mcp`,
        '--start',
        command,
        '--start-timeout',
        '90000',
        '--storyboards',
        'capability_discovery',
      ],
      { ADCP_AUTH_TOKEN: 'sk_harness_do_not_use_in_prod' },
    );
    expect(run.status, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+2 passed \(2\)/);
    await expectGone(pidFile, port);
  }, 180_000);

  describe('issue 33: a start that fails stops the run with one line and exit 2', () => {
    const ONE_LINE = /vitest-adcp cannot run the storyboards: the agent command `[^\n]*/g;
    const exitsAtOnce = `echo 'Error: no such config' >&2; exit 3`;
    /** A command that keeps running and never answers, recording its group's leader. */
    const neverReady = (pidFile: string) =>
      `echo $$ > '${pidFile}'; '${process.execPath}' -e 'setInterval(() => {}, 1000)'`;
    const oneLine = (output: string) => {
      const lines = output.match(ONE_LINE) ?? [];
      expect(lines, output).toHaveLength(1);
      return lines[0]!;
    };

    it('`npx vitest run`, a command that exits at once', () => {
      writeStartConfig();
      const run = npx(['vitest', 'run', '--config', 'vitest.start.config.mts'], {
        START_URL: 'http://127.0.0.1:9/mcp',
        START_COMMAND: exitsAtOnce,
      });
      expect(run.status, run.output).toBe(2);
      expect(oneLine(run.output)).toContain('exited with code 3 before it answered at http://127.0.0.1:9/mcp');
    }, 120_000);

    it('`npx vitest run`, a command that never becomes ready: stopped within timeoutMs, its group gone', async () => {
      const port = await closedPort();
      const pidFile = join(dir, 'never-ready.pid');
      writeStartConfig();
      const run = npx(['vitest', 'run', '--config', 'vitest.start.config.mts'], {
        START_URL: `http://127.0.0.1:${port}/mcp`,
        START_COMMAND: neverReady(pidFile),
        START_TIMEOUT: '2000',
      });
      expect(run.status, run.output).toBe(2);
      expect(oneLine(run.output)).toContain(`did not answer at http://127.0.0.1:${port}/mcp within 2000 ms`);
      await expectGone(pidFile, port);
    }, 120_000);

    it('the bin, a command that exits at once', () => {
      const run = npx(['vitest-adcp', 'http://127.0.0.1:9/mcp', '--start', exitsAtOnce]);
      expect(run.status, run.output).toBe(2);
      expect(run.output.trim().split('\n'), run.output).toHaveLength(1);
      expect(oneLine(run.output)).toContain('exited with code 3 before it answered at http://127.0.0.1:9/mcp');
    }, 120_000);

    it('the bin, a command that never becomes ready: stopped within --start-timeout, its group gone', async () => {
      const port = await closedPort();
      const pidFile = join(dir, 'never-ready-bin.pid');
      const url = `http://127.0.0.1:${port}/mcp`;
      const run = npx(['vitest-adcp', url, '--start', neverReady(pidFile), '--start-timeout', '2000']);
      expect(run.status, run.output).toBe(2);
      expect(run.output.trim().split('\n'), run.output).toHaveLength(1);
      expect(oneLine(run.output)).toContain(`did not answer at ${url} within 2000 ms`);
      await expectGone(pidFile, port);
    }, 120_000);
  });

  it("issue 33: in vitest --watch, a save of the seller's source (agent.start.watch) restarts it (a new process group) and the storyboard re-runs green", async () => {
    const port = await closedPort();
    const pidFile = join(dir, 'watched-seller.pid');
    // The seller's own source in the repository (the SDK's example, imported): what `watch` names and the test saves.
    mkdirSync(join(project, 'agent'), { recursive: true });
    const seller = join(project, 'agent', 'seller.ts');
    writeFileSync(seller, `import '../${SDK_SELLER}';\n`);
    writeStartConfig();
    const watch = spawn(
      join(project, 'node_modules', '.bin', 'vitest'),
      ['--watch', '--config', 'vitest.start.config.mts'],
      {
        cwd: project,
        env: cleanEnv({
          START_URL: `http://127.0.0.1:${port}/mcp`,
          START_COMMAND: sellerCommand(pidFile, 'agent/seller.ts'),
          START_PORT: String(port),
          START_WATCH: 'agent/**',
          ADCP_AUTH_TOKEN: 'sk_harness_do_not_use_in_prod',
        }),
        // stdin a pipe, not a TTY: Vitest watches (--watch) without its keyboard shortcuts.
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let output = '';
    watch.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    watch.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const ended = new Promise((resolve) => watch.once('exit', resolve));
    /** The output of the `n`th run, once Vitest says it waits for changes after it (bounded). */
    const run = async (n: number) => {
      const until = Date.now() + 120_000;
      while (output.split(WAITING).length <= n) {
        if (watch.exitCode !== null || watch.signalCode !== null) throw new Error(`vitest --watch ended:\n${output}`);
        if (Date.now() > until) throw new Error(`vitest --watch did not finish run ${n}:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return output.split(WAITING)[n - 1]!;
    };
    try {
      expect(await run(1), output).toMatch(/Tests\s+2 passed \(2\)/);
      const first = groupOf(pidFile);
      writeFileSync(seller, `// saved again\nimport '../${SDK_SELLER}';\n`);
      const second = await run(2);
      expect(second, output).toContain('RERUN');
      expect(second, output).toMatch(/Tests\s+2 passed \(2\)/);
      expect(groupOf(pidFile)).not.toBe(first);
      expect(groupAlive(first)).toBe(false);
    } finally {
      watch.kill('SIGTERM');
      await ended;
    }
    // Nothing left once the watch ends: no process of the agent's group, nothing listening on its port.
    await expectGone(pidFile, port);
  }, 240_000);

  it('issue 31 item 4: a -t filtered run grades what was selected: the step it depends on is replayed, not counted; the rest is not selected, not run', () => {
    // caps_filtered reads a capture of caps; caps_wrong, which fails on any agent, is needed by nothing selected.
    const storyboard = [
      'id: core',
      'version: "1.0.0"',
      'title: Filtered run',
      'category: capability_discovery',
      'summary: A step that needs another, and a failing step nothing selected needs.',
      'track: core',
      'narrative: x',
      'agent: { interaction_model: media_buy_seller, capabilities: [sells_media] }',
      'caller: { role: buyer_agent }',
      'phases:',
      '  - id: p',
      '    title: P',
      '    steps:',
      '      - id: caps',
      '        title: Capabilities',
      '        task: get_adcp_capabilities',
      '        stateful: true',
      '        context_outputs: [{ name: first_protocol, path: "supported_protocols[0]" }]',
      '        validations: [{ check: field_present, path: supported_protocols, description: protocols }]',
      '      - id: caps_filtered',
      '        title: Capabilities of the first protocol',
      '        task: get_adcp_capabilities',
      '        sample_request: { protocols: ["$context.first_protocol"] }',
      '        validations: [{ check: field_present, path: supported_protocols, description: protocols }]',
      '      - id: caps_wrong',
      '        title: Capabilities, expecting what the agent does not say',
      '        task: get_adcp_capabilities',
      '        validations: [{ check: field_value, path: adcp.idempotency.supported, value: false, description: wrong on purpose }]',
      '',
    ].join('\n');
    writeFileSync(join(project, 'filtered.storyboard.yaml'), storyboard);
    const run = npx(
      [
        'vitest-adcp',
        inject('agentUrl'),
        '--storyboards',
        'filtered.storyboard.yaml',
        '--report',
        'filtered.json',
        '--',
        '-t',
        'caps_filtered',
      ],
      { ADCP_AUTH_TOKEN: TOKEN },
    );
    expect(run.status, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+1 passed \| 2 skipped \(3\)/);
    expect(run.output).toContain(
      'vitest-adcp: 1 storyboard, 1 step: 1 passed, 0 failed, 0 skipped, 1 not run, 1 not selected',
    );
    expect(run.output).not.toMatch(/core\s+failed/);
    const report = JSON.parse(readFileSync(join(project, 'filtered.json'), 'utf8'));
    expect(report.summary).toMatchObject({ total_steps: 1, steps_passed: 1, steps_failed: 0, steps_not_run: 1 });
    expect(report.storyboards[0].steps.map((s: any) => [s.step_id, s.not_run?.reason ?? s.passed])).toEqual([
      ['caps', 'replayed'],
      ['caps_filtered', true],
    ]);
    // The installed SDK's corpus decides the contract: 2.6.0 lists the step left out, 1.1.0 has no field for it.
    if (report.contract.version === '2.6.0')
      expect(report.summary.not_selected).toEqual([
        expect.objectContaining({ step_id: 'caps_wrong', reason: 'explicit_scope_excluded', step_count: 1 }),
      ]);
    else expect(report.summary).not.toHaveProperty('not_selected');
  }, 120_000);
});
