/**
 * buildContractReport and the reporter class, in process: the records below
 * stand in for what Vitest hands a reporter (test modules whose tests carry
 * `meta().adcp`), so every status rule and every field of the report is pinned
 * without starting a child Vitest. The end-to-end path is in reporter.e2e.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { TestModule, Vitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import type { SkipResult, StepResult, ValidationResult } from '../../src/model/records.js';
import AdcpReporter, { buildContractReport } from '../../src/vitest/reporter.js';
import type { StoryboardInfo } from '../../src/model/step-meta.js';
import { testDir } from '../helpers/temp-dir.js';

const ROOT = '/repo';

interface FakeTest {
  name: string;
  meta: () => Record<string, unknown>;
  result: () => { state?: string; errors?: { message: string }[] };
}

function moduleOf(moduleId: string, tests: FakeTest[]): TestModule {
  return { moduleId, children: { allTests: () => tests[Symbol.iterator]() } } as unknown as TestModule;
}

function info(id: string, overrides: Partial<StoryboardInfo> = {}): StoryboardInfo {
  return { id, title: `Title ${id}`, file: `/repo/sb/${id}.yaml`, ...overrides };
}

function stepTest(storyboard: StoryboardInfo, result: Partial<StepResult>): FakeTest {
  const full: StepResult = {
    storyboard_id: storyboard.id,
    phase_id: 'p',
    step_id: 's',
    task: 't',
    passed: true,
    duration_ms: 1,
    validations: [],
    extraction: { path: 'structured_content' },
    ...result,
  };
  const status = full.skip ? 'skipped' : full.passed ? 'passed' : 'failed';
  return {
    name: full.step_id,
    meta: () => ({ adcp: { id: `${storyboard.id}/p/${full.step_id}`, status, result: full, storyboard } }),
    result: () => ({ state: status }),
  };
}

const skip = (reason: SkipResult['reason']): SkipResult => ({ reason, detail: `because ${reason}` });

describe('buildContractReport', () => {
  it('writes the contract header, one entry per storyboard with its metadata and counts every step once', () => {
    // A 3.0 corpus's run: contract 1.1.0 (a run without a corpus version follows the newest: contract-versions.test.ts).
    const a = info('a', { version: '1.0', track: 'core', corpus_version: '3.0.6' });
    const report = buildContractReport(
      [
        moduleOf('/repo/sb/a.yaml', [
          stepTest(a, { step_id: 's1' }),
          stepTest(a, { step_id: 's1b' }),
          stepTest(a, { step_id: 's2', passed: false }),
          stepTest(a, { step_id: 's3', passed: false, skip: skip('missing_tool') }),
        ]),
      ],
      ROOT,
    );
    expect(report.contract).toEqual({ id: 'runner_output_contract', version: '1.1.0' });
    expect(report.runner).toEqual({ name: 'vitest-adcp', version: '0.1.0' });
    expect(Date.parse(report.generated_at)).not.toBeNaN();
    expect(report.storyboards).toHaveLength(1);
    const [entry] = report.storyboards;
    expect(entry).toMatchObject({
      storyboard_id: 'a',
      title: 'Title a',
      version: '1.0',
      track: 'core',
      file: 'sb/a.yaml',
      status: 'failed',
    });
    expect(entry!.steps.map((s) => s.step_id)).toEqual(['s1', 's1b', 's2', 's3']);
    expect(report.summary).toMatchObject({ total_steps: 4, steps_passed: 2, steps_failed: 1, steps_skipped: 1 });
    expect(report.load_errors).toEqual([]);
  });

  it('leaves version and track out when the storyboard has none and files untracked storyboards under "untracked"', () => {
    const report = buildContractReport([moduleOf('/repo/sb/b.yaml', [stepTest(info('b'), {})])], ROOT);
    expect(report.storyboards[0]).not.toHaveProperty('version');
    expect(report.storyboards[0]).not.toHaveProperty('track');
    expect(report.summary.tracks).toEqual([
      {
        track: 'untracked',
        project: '',
        agent_url: null,
        status: 'passed',
        storyboards: [{ storyboard_id: 'b', status: 'passed' }],
      },
    ]);
  });

  it('grades a storyboard: failed on a required failure, passed despite an optional one, skipped when every step skipped', () => {
    const status = (steps: Partial<StepResult>[]) =>
      buildContractReport(
        [
          moduleOf(
            '/repo/x.yaml',
            steps.map((s, i) => stepTest(info('x'), { step_id: `s${i}`, ...s })),
          ),
        ],
        ROOT,
      ).storyboards[0]!.status;
    expect(status([{}, { passed: false }])).toBe('failed');
    expect(status([{}, { passed: false, optional: true }])).toBe('passed');
    expect(status([{ passed: false, skip: skip('not_applicable') }])).toBe('skipped');
    expect(status([{}, { passed: false, skip: skip('not_applicable') }])).toBe('passed');
    expect(
      status([
        { passed: true, skip: skip('not_applicable') },
        { passed: false, skip: skip('missing_tool') },
      ]),
    ).toBe('skipped');
  });

  it('records a storyboard skipped as a whole with its reason', () => {
    const whole: FakeTest = {
      name: 'no phases',
      meta: () => ({ adcpStoryboard: { storyboard: info('w', { track: 't' }), skip: skip('no_phases') } }),
      result: () => ({}),
    };
    const report = buildContractReport([moduleOf('/repo/sb/w.yaml', [whole])], ROOT);
    expect(report.storyboards).toEqual([
      {
        storyboard_id: 'w',
        title: 'Title w',
        track: 't',
        file: 'sb/w.yaml',
        project: '',
        agent_url: null,
        protocol: null,
        status: 'skipped',
        skip: skip('no_phases'),
        steps: [],
      },
    ]);
    expect(report.summary.tracks).toEqual([
      {
        track: 't',
        project: '',
        agent_url: null,
        status: 'skipped',
        storyboards: [{ storyboard_id: 'w', status: 'skipped' }],
        skip_reasons: ['no_phases'],
      },
    ]);
  });

  it('groups tracks: failed if any member failed, skipped only if all skipped (with their distinct reasons), else passed', () => {
    const t = (id: string, steps: Partial<StepResult>[]) =>
      moduleOf(
        `/repo/${id}.yaml`,
        steps.map((s, i) => stepTest(info(id, { track: 'core' }), { step_id: `s${i}`, ...s })),
      );
    const tracksOf = (...modules: TestModule[]) => buildContractReport(modules, ROOT).summary.tracks;
    expect(tracksOf(t('p', [{}]), t('f', [{ passed: false }]))[0]!.status).toBe('failed');
    expect(tracksOf(t('p', [{}]), t('k', [{ skip: skip('missing_tool') }]))[0]).toEqual({
      track: 'core',
      project: '',
      agent_url: null,
      status: 'passed',
      storyboards: [
        { storyboard_id: 'p', status: 'passed' },
        { storyboard_id: 'k', status: 'skipped' },
      ],
    });
    expect(
      tracksOf(
        t('k1', [{ skip: skip('missing_tool') }, { skip: skip('missing_tool') }]),
        t('k2', [{ skip: skip('not_applicable') }]),
      )[0],
    ).toEqual({
      track: 'core',
      project: '',
      agent_url: null,
      status: 'skipped',
      storyboards: [
        { storyboard_id: 'k1', status: 'skipped' },
        { storyboard_id: 'k2', status: 'skipped' },
      ],
      skip_reasons: ['missing_tool', 'not_applicable'],
    });
  });

  it('keeps two storyboards with the same id in different files apart, and one storyboard split over tests together', () => {
    const one = info('same', { file: '/repo/one.yaml' });
    const two = info('same', { file: '/repo/two.yaml' });
    const report = buildContractReport(
      [
        moduleOf('/repo/one.yaml', [stepTest(one, { step_id: 'a' }), stepTest(one, { step_id: 'b' })]),
        moduleOf('/repo/two.yaml', [stepTest(two, {})]),
      ],
      ROOT,
    );
    expect(report.storyboards.map((s) => [s.file, s.steps.length])).toEqual([
      ['one.yaml', 2],
      ['two.yaml', 1],
    ]);
  });

  it('lists each schema the run applied once, sorted by id — a webhook payload schema too —, not the identity presumed for one not found', () => {
    const v = (
      check: string,
      schema_id: string | null,
      schema_url: string | null,
      actual?: unknown,
    ): ValidationResult => ({
      check,
      passed: actual === undefined,
      description: 'd',
      schema_id,
      schema_url,
      ...(actual ? { actual } : {}),
    });
    const report = buildContractReport(
      [
        moduleOf('/repo/s.yaml', [
          stepTest(info('s'), {
            step_id: 'a',
            validations: [
              v('response_schema', 'z.json', 'https://s/z.json'),
              v('response_schema', 'a.json', 'https://s/a.json'),
            ],
          }),
          stepTest(info('s'), {
            step_id: 'b',
            validations: [
              v('response_schema', 'a.json', 'https://s/a.json'),
              v('expect_webhook', 'w.json', 'https://s/w.json'),
              v('response_schema', 'n.json', null),
              v('response_schema', null, 'https://s/u.json'),
              v('response_schema', 'missing.json', 'https://s/missing.json', {
                reason: 'schema_not_found',
                ref: 'missing.json',
              }),
              v('expect_webhook', 'gone.json', 'https://s/gone.json', {
                code: 'schema_violation',
                observed: { reason: 'schema_not_found', ref: 'gone.json' },
              }),
            ],
          }),
        ]),
      ],
      ROOT,
    );
    expect(report.summary.schemas_used).toEqual([
      { schema_id: 'a.json', schema_url: 'https://s/a.json' },
      { schema_id: 'w.json', schema_url: 'https://s/w.json' },
      { schema_id: 'z.json', schema_url: 'https://s/z.json' },
    ]);
  });

  it('reports a storyboard file that failed to load with the first error message, and ignores other meta-less tests', () => {
    const loadFailure: FakeTest = {
      name: 'loads without errors (schema)',
      meta: () => ({}),
      result: () => ({ errors: [{ message: 'sb.yaml:3:1 bad key' }, { message: 'second' }] }),
    };
    const noErrors: FakeTest = { name: 'loads without errors', meta: () => ({}), result: () => ({}) };
    const other: FakeTest = {
      name: 'loads without errors',
      meta: () => ({}),
      result: () => ({ errors: [{ message: 'x' }] }),
    };
    const handWritten: FakeTest = {
      name: 'my own test',
      meta: () => ({}),
      result: () => ({ errors: [{ message: 'y' }] }),
    };
    const report = buildContractReport(
      [
        moduleOf('/repo/bad.yaml', [loadFailure]),
        moduleOf('/repo/bad2.yml', [noErrors]),
        moduleOf('/repo/own.test.ts', [other, handWritten]),
        moduleOf('/repo/bad.yaml.ts', [other]),
      ],
      ROOT,
    );
    expect(report.load_errors).toEqual([
      { file: 'bad.yaml', message: 'sb.yaml:3:1 bad key', project: '' },
      { file: 'bad2.yml', message: 'loads without errors', project: '' },
    ]);
    expect(report.storyboards).toEqual([]);
  });

  it('records a step Vitest ended before the engine answered (its timeout) as failed, with the reason and a remedy', () => {
    const planned = info('slow', { track: 'core' });
    const timedOut: FakeTest = {
      name: 'slow step',
      meta: () => ({ adcpPlanned: { storyboard: planned, phase_id: 'p', step_id: 'slow', task: 'get_products' } }),
      result: () => ({ state: 'failed', errors: [{ message: 'Test timed out in 5000ms.' }] }),
    };
    const notRun: FakeTest = {
      name: 'filtered',
      meta: () => ({ adcpPlanned: { storyboard: planned, phase_id: 'p', step_id: 'never' } }),
      result: () => ({ state: 'skipped' }),
    };
    const report = buildContractReport(
      [moduleOf('/repo/sb/slow.yaml', [stepTest(planned, { step_id: 'fast' }), timedOut, notRun])],
      ROOT,
    );
    const [entry] = report.storyboards;
    expect(entry!.status).toBe('failed');
    // A planned step whose test never ran (filtered) is listed as not run, not dropped and not failed.
    expect(entry!.steps.map((s) => [s.step_id, s.passed, 'not_run' in s])).toEqual([
      ['fast', true, false],
      ['slow', false, false],
      ['never', false, true],
    ]);
    expect(entry!.steps[1]).toMatchObject({
      storyboard_id: 'slow',
      phase_id: 'p',
      task: 'get_products',
      validations: [],
      extraction: { path: 'none' },
      error:
        "the test ended before the step had a verdict: Test timed out in 5000ms. (if Vitest's timeout fired, raise testTimeout above the step bound timeoutMs)",
    });
    expect(report.summary).toMatchObject({ total_steps: 2, steps_passed: 1, steps_failed: 1, steps_not_run: 1 });
    const noReason: FakeTest = {
      ...timedOut,
      meta: () => ({ adcpPlanned: { storyboard: planned, phase_id: 'p', step_id: 'x' } }),
      result: () => ({ state: 'failed' }),
    };
    expect(
      buildContractReport([moduleOf('/repo/sb/slow.yaml', [noReason])], ROOT).storyboards[0]!.steps[0],
    ).toMatchObject({ task: 'unknown', error: expect.stringContaining('no reason given') });
  });

  it('fails a step the engine passed when the framework failed its test afterwards, so the report agrees with the terminal', () => {
    const a = info('a');
    const passedThenFailed: FakeTest = {
      ...stepTest(a, { step_id: 'x' }),
      result: () => ({ state: 'failed', errors: [{ message: 'afterEach hook failed' }] }),
    };
    const skippedButFailed: FakeTest = {
      ...stepTest(a, { step_id: 'y', skip: skip('not_applicable') }),
      result: () => ({ state: 'failed' }),
    };
    // Jest cannot skip a started test: the contract's skip passes there, and the record's status stands.
    const skippedButPassed: FakeTest = {
      ...stepTest(a, { step_id: 'z', skip: skip('missing_tool') }),
      result: () => ({ state: 'passed' }),
    };
    const report = buildContractReport(
      [moduleOf('/repo/a.yaml', [passedThenFailed, skippedButFailed, skippedButPassed])],
      ROOT,
    );
    expect(report.storyboards[0]!.steps[0]).toMatchObject({
      passed: false,
      error: 'the test failed after the step passed: afterEach hook failed',
    });
    expect(report.storyboards[0]!.steps[1]).toMatchObject({ passed: true, skip: { reason: 'not_applicable' } });
    expect(report.storyboards[0]!.steps[2]).toMatchObject({ passed: true, skip: { reason: 'missing_tool' } });
    expect(report.summary).toMatchObject({ steps_failed: 1, steps_skipped: 2 });
    expect(report.storyboards[0]!.status).toBe('failed');
  });

  it('redacts step records again on the way into the report', () => {
    const report = buildContractReport(
      [
        moduleOf('/repo/r.yaml', [
          stepTest(info('r'), { request: { transport: 'mcp', operation: 't', payload: { token: 'leak' } } }),
        ]),
      ],
      ROOT,
    );
    expect(report.storyboards[0]!.steps[0]!.request!.payload).toEqual({ token: '[redacted]' });
  });
});

describe('AdcpReporter', () => {
  const logged: string[] = [];
  const vitestAt = (root: string, outputFile?: unknown) =>
    ({ config: { root, outputFile }, logger: { log: (m: string) => logged.push(m) } }) as unknown as Vitest;
  const modules = [moduleOf('/x/a.yaml', [stepTest(info('a', { file: '/x/a.yaml' }), {})])];

  it('writes adcp-results.json at the project root by default', () => {
    const root = testDir('adcp-reporter-');
    const reporter = new AdcpReporter();
    reporter.onInit(vitestAt(root));
    reporter.onTestRunEnd(modules);
    const text = readFileSync(join(root, 'adcp-results.json'), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text).summary.total_steps).toBe(1);
    expect(text).toContain('\n  "contract": {');
    expect(logged.at(-1)).toBe(
      `vitest-adcp: runner output contract report (1 step: 1 passed, 0 failed, 0 skipped) written to ${relative(process.cwd(), join(root, 'adcp-results.json'))}`,
    );
  });

  it("takes Vitest's outputFile['vitest-adcp'] and creates missing folders, ignoring a plain-string outputFile", () => {
    const root = testDir('adcp-reporter-');
    const reporter = new AdcpReporter();
    reporter.onInit(vitestAt(root, { 'vitest-adcp': 'out/deep/r.json', junit: 'j.xml' }));
    reporter.onTestRunEnd(modules);
    expect(JSON.parse(readFileSync(join(root, 'out/deep/r.json'), 'utf8')).storyboards[0].file).toBe(
      relative(root, '/x/a.yaml'),
    );

    const plainString = new AdcpReporter();
    plainString.onInit(vitestAt(root, 'junit.xml'));
    plainString.onTestRunEnd(modules);
    expect(JSON.parse(readFileSync(join(root, 'adcp-results.json'), 'utf8')).storyboards).toHaveLength(1);
  });

  it('prefers its own outputFile option over the Vitest one', () => {
    const root = testDir('adcp-reporter-');
    const reporter = new AdcpReporter({ outputFile: 'mine.json' });
    reporter.onInit(vitestAt(root, { 'vitest-adcp': 'theirs.json' }));
    reporter.onTestRunEnd(modules);
    expect(JSON.parse(readFileSync(join(root, 'mine.json'), 'utf8')).storyboards).toHaveLength(1);
  });

  it("streams NDJSON beside the JSON (ndjson: true) or where outputFile['vitest-adcp-ndjson'] says, and counts unrun steps in its line", () => {
    const a = info('a', { file: '/x/a.yaml' });
    const ran = stepTest(a, { step_id: 'ran' });
    const filtered: FakeTest = {
      name: 'filtered',
      meta: () => ({ adcpPlanned: { storyboard: a, phase_id: 'p', step_id: 'filtered' } }),
      result: () => ({ state: 'skipped' }),
    };
    const module = moduleOf('/x/a.yaml', [ran, filtered]);
    const asCase = (t: FakeTest) => ({ ...t, module }) as unknown as Parameters<AdcpReporter['onTestCaseResult']>[0];
    const lines = (file: string) =>
      readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));

    const root = testDir('adcp-reporter-');
    const reporter = new AdcpReporter({ outputFile: 'out/r.json', ndjson: true });
    reporter.onInit(vitestAt(root));
    reporter.onTestRunStart();
    reporter.onTestCaseResult(asCase(ran));
    // Killed here: the step is on disk already.
    expect(lines(join(root, 'out/r.ndjson')).map((l) => [l.type, l.step?.step_id])).toEqual([
      ['run_start', undefined],
      ['step', 'ran'],
    ]);
    reporter.onTestCaseResult(asCase(filtered));
    reporter.onTestRunEnd([module]);
    expect(
      lines(join(root, 'out/r.ndjson')).map((l) => [l.type, l.step?.step_id ?? null, l.step?.not_run?.reason ?? null]),
    ).toEqual([
      ['run_start', null, null],
      ['step', 'ran', null],
      ['step', 'filtered', 'not_reached'],
      ['run_end', null, null],
    ]);
    expect(logged.at(-1)).toMatch(/\(1 step: 1 passed, 0 failed, 0 skipped; 1 not run\) written to /);

    const configured = new AdcpReporter();
    configured.onInit(vitestAt(root, { 'vitest-adcp-ndjson': 'stream/run.ndjson' }));
    configured.onTestRunEnd([module]);
    expect(lines(join(root, 'stream/run.ndjson')).map((l) => l.type)).toEqual(['run_start', 'run_end']);
    // Off unless asked for.
    const off = testDir('adcp-reporter-');
    const plain = new AdcpReporter();
    plain.onInit(vitestAt(off));
    plain.onTestRunStart();
    plain.onTestRunEnd([module]);
    expect(readdirSync(off)).toEqual(['adcp-results.json']);
  });
});
