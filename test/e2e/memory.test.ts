/**
 * The peak-memory bound of issue 13, on a real `vitest run`: an agent answering 8 MB bodies on which each step's 80
 * checks all fail (fixtures/hostile/memory/) — once a 248 MB report and 1.97 GB of RSS, because every failed check
 * carried its own copy of the answer. Each process of the run reports its own peak (VmHWM) through
 * test/helpers/rss-probe.mjs; the main process's start-of-run peak comes from test/helpers/rss-reporter.ts.
 *
 * A bound, not a timing: the numbers are the kernel's high-water marks, the same on a slow machine as on a fast one.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { builtModule } from '../helpers/built.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const MiB = 1024 * 1024;
const scratch = join(repoRoot, '.vitest-adcp', `memory-${process.pid}`);
const probes = join(scratch, 'rss');
const reportFile = join(scratch, 'report.json');

let agent: FixtureAgent;
let run: VitestRun;
let peaks: { pid: number; ppid: number; argv: string[]; peakKiB: number }[];
let main: { pid: number; atStartKiB: number; atEndKiB: number };

beforeAll(async () => {
  agent = await startFixtureAgent();
  mkdirSync(probes, { recursive: true });
  run = await runVitest({
    config: join(repoRoot, 'test', 'e2e', 'hostile.config.ts'),
    env: {
      ADCP_AGENT_URL: `${agent.origin}/x/hostile/mcp`,
      HOSTILE_STORYBOARDS: join(repoRoot, 'fixtures', 'hostile', 'memory', '*.storyboard.yaml'),
      // The default limit (10 MiB): the 8 MB answers are read whole.
      HOSTILE_MAX_RESPONSE_BYTES: String(10 * MiB),
      RSS_PROBE_DIR: probes,
      NODE_OPTIONS:
        `${process.env.NODE_OPTIONS ?? ''} --import=${join(repoRoot, 'test', 'helpers', 'rss-probe.mjs')}`.trim(),
    },
    reporters: [await builtModule('vitest/reporter'), join(repoRoot, 'test', 'helpers', 'rss-reporter.ts')],
    args: [`--outputFile.vitest-adcp=${reportFile}`],
  });
  const files = readdirSync(probes);
  peaks = files.filter((f) => /^\d+\.json$/.test(f)).map((f) => JSON.parse(readFileSync(join(probes, f), 'utf8')));
  main = JSON.parse(readFileSync(join(probes, 'main.json'), 'utf8'));
}, 120_000);

afterAll(async () => {
  await agent?.close();
  rmSync(scratch, { recursive: true, force: true });
});

it('ran the case: two 8 MB answers, every one of their 80 checks failing, each step failing on its own', () => {
  const steps = run.tests.filter((t) => t.meta?.adcp);
  expect(steps.map((t) => [t.name, t.state])).toEqual([
    ['An 8 MB answer, 80 failing checks (big_answer)', 'failed'],
    ['Another 8 MB answer, 80 failing checks (big_answer_again)', 'failed'],
  ]);
  for (const test of steps) {
    // The 80 checks, and the context echo the answer lacks.
    expect(test.errors[0]!.message).toMatch(
      /^field_value at \/items\/0: expected "not this", got a value too large to keep \(100002 characters of JSON, its start below\) — .*\(\+80 more failed checks\)$/,
    );
    expect(test.meta.adcp.result.validations.filter((v: any) => v.check === 'field_value' && !v.passed)).toHaveLength(
      80,
    );
  }
  expect(agent.calls.filter((c) => (c.arguments as any)?.context?.hostile === 'big_8000000')).toHaveLength(2);
});

it('writes a report under 20 MB, complete and valid against the contract schema', () => {
  expect(statSync(reportFile).size).toBeLessThan(20 * MiB);
  const report = JSON.parse(readFileSync(reportFile, 'utf8'));
  assertValidContractReport(report);
  expect(report.summary).toMatchObject({ total_steps: 2, steps_failed: 2 });
  expect(report.storyboards[0].steps.map((s: any) => s.validations.length)).toEqual([
    expect.any(Number),
    expect.any(Number),
  ]);
});

it('stays under 300 MB of RSS in the workers that show the steps', () => {
  const workers = peaks.filter((p) => p.ppid === main.pid);
  expect(workers.length, JSON.stringify(peaks)).toBeGreaterThan(0);
  for (const worker of workers) expect(worker.peakKiB / 1024, JSON.stringify(worker)).toBeLessThan(300);
});

it('adds less than 160 MB to the main process, which reads, grades and records the answers, over where it starts the run', () => {
  // The main process is at ~330 MB before any test runs here: Vite bundles this TS config with all of src/ inlined
  // (a config importing the built package from node_modules starts at about half that) and a second Vite server
  // serves the vitest-adcp project. A run of a small storyboard adds ~35 MB to it (compiling the storyboard, the
  // worker's messages). The storyboard runs in this process (the run host, src/plugin/run-host.ts): reading the two
  // 8 MB answers, grading them and keeping their records adds ~80 MB more — what the worker that ran them added before
  // — and handing each record to its worker once (node:v8, the answer kept once however many checks refer to it).
  // Records holding a copy of the 8 MB answer per failed check (80 of them) would add hundreds.
  expect((main.atEndKiB - main.atStartKiB) / 1024, JSON.stringify(main)).toBeLessThan(160);
  expect(main.atEndKiB / 1024, JSON.stringify(main)).toBeLessThan(500);
});
