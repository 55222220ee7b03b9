/**
 * One step protocol under both frameworks (src/adapter/step-session.ts): the same storyboards, run by a real `vitest run`
 * and a real `jest` on one project against the fixture agent, give the same runner output contract report — times,
 * durations and the framework's project name aside. Each case is a place the two adapters once disagreed: a storyboard
 * without phases, a step a hook failed after the engine passed it, a `-t` filter over injected steps (controller
 * seeding, signed_requests vectors), a failing step's expected/actual diff; and a step failed by the transport on an
 * answer the agent sent (a result its tool's declared outputSchema refuses: the record keeps the answer).
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatBehaviourSegment } from '../../fixtures/agent/behaviours.mjs';
import { copyBuiltDist } from '../helpers/built.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { readJestJson } from '../helpers/jest-project.js';
import { repoRoot, runNode, runVitest, type NodeRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `same-report-${process.pid}`);
const project = join(scratch, 'project');
const dist = join(scratch, 'dist');
const jestBin = join(repoRoot, 'node_modules', 'jest', 'bin', 'jest.js');
const fixtures = join(repoRoot, 'fixtures', 'same-report');

/** The hook both frameworks run after each test: it fails the step `fails_after`, which the engine passes. */
const HOOK_ERROR = 'afterEach: the project hook fails fails_after';

beforeAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(join(project, 'storyboards'), { recursive: true });
  // The built package (test/helpers/built.ts), as a user's project reaches it: both frameworks load the same dist/.
  await copyBuiltDist(dist, { sourceMaps: true });
  symlinkSync(join(repoRoot, 'schema'), join(scratch, 'schema'));
  copyFileSync(join(repoRoot, 'package.json'), join(scratch, 'package.json'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'same-report', private: true }));
  symlinkSync(join(repoRoot, 'node_modules'), join(project, 'node_modules'));
  for (const file of readdirSync(fixtures)) copyFileSync(join(fixtures, file), join(project, 'storyboards', file));
  const failsAfter = `if (/\\(fails_after\\)$/.test(NAME)) throw new Error(${JSON.stringify(HOOK_ERROR)});`;
  writeFileSync(
    join(project, 'after-each.jest.js'),
    `afterEach(() => { ${failsAfter.replace('NAME', 'expect.getState().currentTestName')} });\n`,
  );
  writeFileSync(
    join(project, 'after-each.vitest.mjs'),
    `import { afterEach } from 'vitest';\nafterEach((ctx) => { ${failsAfter.replace('NAME', 'ctx.task.name')} });\n`,
  );
  writeFileSync(
    join(project, 'jest.config.js'),
    `module.exports = { preset: ${JSON.stringify(join(dist, 'jest', 'jest-preset.cjs'))}, setupFilesAfterEnv: ['<rootDir>/after-each.jest.js'], reporters: ['default', [${JSON.stringify(join(dist, 'jest', 'reporter.cjs'))}, { outputFile: 'reports/jest.json' }]] };\n`,
  );
  // `isolate: true`: the storyboards run in this project, with its setup file (the plugin's own project has none).
  writeFileSync(
    join(project, 'vitest.config.mjs'),
    `import { defineConfig } from 'vitest/config';\nimport { adcpStoryboards } from ${JSON.stringify(join(dist, 'index.js'))};\nexport default defineConfig({ plugins: [adcpStoryboards({ include: ['storyboards/*.storyboard.yaml'], isolate: true })], test: { include: [], setupFiles: ['./after-each.vitest.mjs'] } });\n`,
  );
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `behaviours`: the fixture agent's endpoint exhibiting them (fixtures/agent/behaviours.mjs), else its conformant one. */
const env = (behaviours: readonly string[] = []) => ({
  ADCP_AGENT_URL:
    behaviours.length === 0
      ? inject('agentUrl')
      : inject('agentUrl').replace(/\/mcp$/, `/x/${formatBehaviourSegment(behaviours)}/mcp`),
  // The fixture agent's demo API keys: its controller (the seeding steps) answers only authenticated calls.
  ADCP_AUTH_TOKEN: 'demo-same-report',
  ADCP_STORYBOARDS: undefined,
  ADCP_COMPLIANCE: undefined,
  GITHUB_STEP_SUMMARY: undefined,
});

/** `jest` on the project, one worker; its `--json` results and the contract report. */
async function runJest(filter: string[], behaviours?: readonly string[]) {
  const run = await runNode([jestBin, '--ci', '-i', '--json', '--outputFile=results.json', ...filter], {
    cwd: project,
    env: env(behaviours),
  });
  return { run, report: readReport('jest.json', run), results: readJestJson(join(project, 'results.json')) };
}

/** `vitest run` on the project, one worker; its captured tests and the contract report. */
async function runVitestOn(filter: string[], behaviours?: readonly string[]) {
  const run = await runVitest({
    config: join(project, 'vitest.config.mjs'),
    cwd: project,
    args: [
      '--root',
      project,
      '--configLoader',
      'native',
      '--maxWorkers=1',
      '--outputFile.vitest-adcp=reports/vitest.json',
      ...filter,
    ],
    reporters: [join(dist, 'vitest', 'reporter.js')],
    env: env(behaviours),
  });
  return { run, report: readReport('vitest.json', run) };
}

function readReport(name: string, run: NodeRun): any {
  const file = join(project, 'reports', name);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new Error(`no report ${name}:\n${run.stdout}\n${run.stderr}`);
  }
  rmSync(file);
  const report = JSON.parse(text);
  assertValidContractReport(report);
  return report;
}

/**
 * What may differ between two runs of the same storyboards by two frameworks: when and how long (times, durations),
 * the framework's project name, and what the agent stamps on each answer (its timestamps). Everything else — every
 * step, verdict, record, skip, not-run reason, summary and envelope field — must be the same.
 */
const VARIES = new Set(['duration_ms', 'generated_at', 'started_at', 'finished_at', 'project']);
/** The fixture agent's seed answer says whether an earlier run (the other framework's) seeded the product already. */
const SEEDED_AGAIN = /product (\w+) was already seeded with an equivalent fixture\./g;
function comparable(report: unknown): unknown {
  const text = JSON.stringify(report).replace(SEEDED_AGAIN, 'Seeded product $1.');
  return JSON.parse(text, (key, value) => (VARIES.has(key) ? undefined : value));
}

const stepsOf = (report: any, id: string) =>
  report.storyboards.find((s: any) => s.storyboard_id === id)?.steps as any[] | undefined;

interface Case {
  name: string;
  /** The test file filter (and more CLI arguments) both frameworks get. */
  args: string[];
  /** The fixture agent's misbehaviours both run against; none: its conformant endpoint. */
  behaviours?: string[];
  /** What the report must say, beyond being the same under both. */
  check: (report: any) => void;
}

/**
 * A case of fixtures/same-report/output-schema.storyboard.yaml against an endpoint whose list_creative_formats declares
 * an outputSchema (`behaviour`): the step refused with `error`, its result recorded as sent; the next step passes.
 */
function refusedByOutputSchema(name: string, behaviour: string, error: string): Case {
  return {
    name,
    args: ['storyboards/output-schema'],
    behaviours: [behaviour],
    check: (report) => {
      const [refused, caps] = stepsOf(report, 'same_output_schema')!;
      expect(refused).toMatchObject({
        step_id: 'formats_refused',
        passed: false,
        validations: [],
        error,
        response: { payload: { isError: false, structuredContent: { formats: expect.any(Array) } } },
      });
      expect(caps).toMatchObject({ step_id: 'caps', passed: true });
    },
  };
}

const cases: Case[] = [
  {
    name: 'a storyboard without phases: one skipped entry (no_phases)',
    args: ['storyboards/no-phases'],
    check: (report) => {
      expect(report.storyboards).toMatchObject([
        { storyboard_id: 'same_no_phases', status: 'skipped', skip: { reason: 'no_phases' }, steps: [] },
      ]);
    },
  },
  {
    name: 'a step an afterEach failed after the engine passed it: failed, with the hook’s reason',
    args: ['storyboards/after-each'],
    check: (report) => {
      const [passes, failsAfter] = stepsOf(report, 'same_after_each')!;
      expect(passes).toMatchObject({ step_id: 'passes', passed: true });
      expect(failsAfter).toMatchObject({ step_id: 'fails_after', passed: false });
      expect(failsAfter.error).toBe(`the test failed after the step passed: ${HOOK_ERROR}`);
      expect(report.summary).toMatchObject({ steps_passed: 1, steps_failed: 1 });
    },
  },
  {
    name: 'a -t filter over injected steps: seeding replayed (not graded, its outcome said), the vector steps not selected',
    args: ['storyboards/injected', '-t', '\\(caps\\)'],
    check: (report) => {
      const steps = stepsOf(report, 'signed_requests')!;
      const seed = steps.find((s) => s.phase_id === '__controller_seeding__');
      expect(seed).toMatchObject({ step_id: 'seed_product.same_report_product', task: 'comply_test_controller' });
      expect(seed.not_run, JSON.stringify(seed)).toMatchObject({
        reason: 'replayed',
        detail: expect.stringMatching(/a selected step depends on it; it passed$/),
      });
      // Its own verdict: signed_requests does not apply to an agent that advertises no request signing.
      expect(steps.find((s) => s.step_id === 'caps')).toMatchObject({ skip: { reason: 'not_applicable' } });
      // The vector steps the filter left out are no steps of the report (2.6.0 lists them as not selected).
      expect(steps.filter((s) => /^(positive|negative)_vectors$/.test(s.phase_id))).toEqual([]);
      if (report.contract.version === '2.6.0') expect(report.summary.steps_not_selected).toBeGreaterThan(10);
      expect(report.summary).toMatchObject({ total_steps: 1, steps_skipped: 1, steps_not_run: 1 });
      expect(report.run).toMatchObject({ complete: false, test_name_pattern: '\\(caps\\)' });
    },
  },
  {
    name: "a failing step's diff: the same record, and the same expected/actual diff in both failures",
    args: ['storyboards/diff'],
    check: (report) => {
      const [step] = stepsOf(report, 'same_diff')!;
      expect(step.validations.find((v: any) => !v.passed)).toMatchObject({
        json_pointer: '/context',
        expected: { correlation_id: 'not-same-diff', note: 'kept' },
        actual: { correlation_id: 'same-diff', note: 'kept' },
      });
    },
  },
  refusedByOutputSchema(
    "a result its tool's declared outputSchema refuses: the same transport-level error, the result as sent",
    'output_schema@list_creative_formats',
    "list_creative_formats's structuredContent does not match the outputSchema it declares in tools/list (data must have required property 'declared_but_never_sent'): an MCP client refuses the result",
  ),
  refusedByOutputSchema(
    'a declared outputSchema whose pattern backtracks without bound: the same refusal after the same bound',
    'backtracking_output_schema@list_creative_formats',
    "list_creative_formats's outputSchema in tools/list cannot be checked in bounded time (a result took over 2 s: a `pattern` there backtracks without bound): an MCP client cannot take its results",
  ),
];

/** The expected/actual diff at the end of a failure's text. */
const diffIn = (text: string) => text.slice(text.indexOf('- Expected\n+ Received\n'));

describe('the same contract report under Vitest and Jest', () => {
  it.each(cases)(
    '$name',
    async ({ args, behaviours, check }) => {
      const jest = await runJest(args, behaviours);
      const vitest = await runVitestOn(args, behaviours);
      const output = `--- vitest\n${vitest.run.stdout}${vitest.run.stderr}\n--- jest\n${jest.run.stdout}${jest.run.stderr}`;
      expect(comparable(jest.report), output).toEqual(comparable(vitest.report));
      check(vitest.report);

      // The failure's text: one step session renders it, so the diff reads the same in both terminals.
      const failed = jest.results.testResults.flatMap((r) => r.assertionResults).filter((a) => a.status === 'failed');
      const vitestFailed = vitest.run.tests.filter((t) => t.state === 'failed');
      expect(failed.map((a) => a.title)).toEqual(vitestFailed.map((t) => t.name));
      if (args[0] === 'storyboards/diff') {
        const vitestDiff = diffIn(vitestFailed[0]!.errors[0]!.diff ?? '');
        expect(vitestDiff).toMatch(
          /^- Expected\n\+ Received\n\n {2}\{\n- {3}"correlation_id": "not-same-diff",\n\+ {3}"correlation_id": "same-diff",\n {4}"note": "kept",\n {2}\}$/,
        );
        expect(failed[0]!.failureMessages.join('\n')).toContain(vitestDiff);
      }
    },
    180_000,
  );
});
