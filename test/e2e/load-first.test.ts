/**
 * Issue 31, items 5 and 6, as whole processes: the built bin (built as test/e2e/cli.test.ts builds it) and a real
 * `vitest run` with the plugin, against the fixture agent and a dead port.
 *
 * - Item 5: a storyboard with a misspelt task beside one that loads, and an agent that is not up: the load error first
 *   (file:line:col and its rule), then the unreachable agent in one line, for the file that loaded. Before, the run
 *   said only "cannot be reached". A run where no file loads needs no agent: its files fail on their load errors.
 * - Item 6: `--storyboards big.storyboard.yaml` with a 40 MB file: `--list` and the run stay small (the selection read
 *   and parsed the file whole before: 1.7 GB peak for `--list`, 1.6 GB for the run). Every process of the child
 *   writes its peak RSS (VmHWM) through test/helpers/rss-probe.mjs, as in hostile-yaml.test.ts.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { closedPort } from '../helpers/ports.js';
import { buildBin, repoRoot, runNode, runVitest, type NodeRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `load-first-${process.pid}`);
const cliJs = join(scratch, 'dist', 'cli.js');
const misspelt = 'fixtures/broken/misspelled-task.storyboard.yaml';
const discovery = 'fixtures/storyboards/discovery.storyboard.yaml';
const CLEAN_ENV = {
  ADCP_AGENT_URL: undefined,
  ADCP_AUTH_TOKEN: undefined,
  ADCP_PROTOCOL: undefined,
  ADCP_COMPLIANCE: undefined,
};
/** The misspelt task's load error, located, as the bin and the plugin print it. */
const LOAD_ERROR =
  'fixtures/broken/misspelled-task.storyboard.yaml:9:15: [misspelled_task] task "get_adcp_capabilites" in step "caps" is not an AdCP or runner task';

beforeAll(async () => {
  await buildBin(scratch);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<NodeRun> {
  return runNode([cliJs, ...args], { env: { ...CLEAN_ENV, ...env } });
}

async function deadAgent(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}/mcp`;
}

describe('item 5: load errors first, then the unreachable agent in one line', () => {
  it('the bin: the load error, then the agent line for the one file that loaded; exit 2', async () => {
    const url = await deadAgent();
    const run = await cli([url, '--allow-http', '--storyboards', `${misspelt},${discovery}`]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    const heading = run.stderr.indexOf(
      'vitest-adcp: 1 of 2 storyboard files does not load (load errors need no agent: fix them first):',
    );
    const loadError = run.stderr.indexOf(LOAD_ERROR);
    const agentLine = run.stderr.indexOf(
      `vitest-adcp cannot run the 1 storyboard file that loads: the agent at ${url} cannot be reached (connect ECONNREFUSED`,
    );
    expect(
      [heading, loadError, agentLine].every((at) => at >= 0),
      run.stderr,
    ).toBe(true);
    expect(heading < loadError && loadError < agentLine, run.stderr).toBe(true);
    expect(run.stderr.match(/cannot be reached/g)).toHaveLength(1);
    expect(run.stdout + run.stderr).not.toMatch(/Unhandled Error|^\s+at /m);
  });

  it('the bin, no file loads: no agent is needed — the load error as a failed test, no agent line; exit 1', async () => {
    const run = await cli([await deadAgent(), '--allow-http', '--storyboards', misspelt]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain('loads without errors (misspelled_task)');
    expect(run.stdout + run.stderr).toContain(LOAD_ERROR.slice(LOAD_ERROR.indexOf('task ')));
    expect(run.stdout + run.stderr).not.toMatch(/cannot be reached/);
  });

  it('the plugin (`vitest run`): the load error, then the agent line, once; no test ran', async () => {
    const url = await deadAgent();
    const run = await runVitest({
      config: join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts'),
      env: { ...CLEAN_ENV, ADCP_AGENT_URL: url, E2E_STORYBOARDS: `${misspelt},${discovery}` },
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).toBe(1);
    const loadError = output.indexOf(LOAD_ERROR);
    const agentLine = output.indexOf(
      `vitest-adcp cannot run the 1 storyboard file that loads: the agent at ${url} cannot be reached`,
    );
    expect(loadError >= 0 && agentLine > loadError, output).toBe(true);
    expect(output.match(/cannot be reached/g)).toHaveLength(1);
    expect(run.tests).toEqual([]);
  });
});

describe('item 6: a 40 MB storyboard named to the bin is never read whole', () => {
  const big = join(scratch, 'big', 'big.storyboard.yaml');
  const probes = join(scratch, 'rss');
  const HEAD =
    'id: big_one\nversion: "1.0.0"\ntitle: T\ncategory: x\nsummary: s\nnarrative: n\nagent:\n  interaction_model: media_buy_seller\ncaller:\n  role: buyer_agent\nphases:\n  - id: p\n    title: P\n    steps:\n      - { id: s, title: S, task: get_products }\nx-filler:\n';

  beforeAll(() => {
    mkdirSync(join(scratch, 'big'), { recursive: true });
    writeFileSync(
      big,
      HEAD + '  - "0123456789012345678901234567890123456789012345678901234567890123456789"\n'.repeat(530_000),
    );
  });

  /** Runs the bin with every process's peak RSS written down; the largest, in MB. */
  async function withPeak(args: string[]): Promise<{ run: NodeRun; peakMB: number }> {
    rmSync(probes, { recursive: true, force: true });
    mkdirSync(probes, { recursive: true });
    const run = await cli(args, {
      RSS_PROBE_DIR: probes,
      NODE_OPTIONS:
        `${process.env.NODE_OPTIONS ?? ''} --import=${join(repoRoot, 'test', 'helpers', 'rss-probe.mjs')}`.trim(),
    });
    const peaks = readdirSync(probes)
      .filter((f) => /^\d+\.json$/.test(f))
      .map((f) => (JSON.parse(readFileSync(join(probes, f), 'utf8')) as { peakKiB: number }).peakKiB);
    expect(peaks.length, run.stderr).toBeGreaterThan(0);
    return { run, peakMB: Math.max(...peaks) / 1024 };
  }

  it('--list: its id from the head, under 200 MB (1.7 GB before)', async () => {
    const { run, peakMB } = await withPeak([inject('agentUrl'), '--list', '--storyboards', big]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^big_one\t.*big\.storyboard\.yaml\t--storyboards /m);
    // Measured 60–70 MB.
    expect(peakMB).toBeLessThan(200);
  });

  it('the run: the located bound error, exit 1, every process under 500 MB (1.6 GB before)', async () => {
    const { run, peakMB } = await withPeak([inject('agentUrl'), '--storyboards', big]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain('loads without errors (storyboard_bound)');
    expect(run.stdout + run.stderr).toMatch(
      /\[storyboard_bound\] the storyboard file is \d{8} bytes, over the bound maxBytes = 524288 bytes/,
    );
    // Measured ~280 MB: Vitest itself reads each test file whole once (hostile-yaml.test.ts says where); nothing of ours does.
    expect(peakMB).toBeLessThan(500);
  });
});
