/**
 * The contract report's builder (src/report/build.ts) on test records written here, so each rule is shown on its
 * own: a storyboard's status from its steps; a filtered run (steps replayed while their tests were filtered out,
 * matched by project, storyboard and step; steps the filter left out, as not selected); a test that failed after its step passed; steps that never ran; one entry and one
 * target per project × agent × protocol, grouped by project; tracks per project × agent, and their status.
 * The reporter's records of real runs against the fixture agent: test/report/contract-schema.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { SkipResult, StepResult } from '../../src/model/records.js';
import type { StoryboardInfo } from '../../src/model/step-meta.js';
import { buildReport, type ReportTest } from '../../src/report/build.js';

const ROOT = '/project';
const AGENT = 'http://127.0.0.1:4100/mcp';

const info = (id: string, extra: Partial<StoryboardInfo> = {}): StoryboardInfo => ({
  id,
  title: `Storyboard ${id}`,
  track: 'core',
  file: `${ROOT}/storyboards/${id}.yaml`,
  agent_url: AGENT,
  protocol: 'mcp',
  corpus_version: '3.0.6',
  ...extra,
});

function result(storyboard: StoryboardInfo, step_id: string, over: Partial<StepResult> = {}): StepResult {
  return {
    storyboard_id: storyboard.id,
    phase_id: 'p',
    step_id,
    task: 'get_products',
    passed: true,
    duration_ms: 3,
    validations: [],
    extraction: { path: 'structured_content' },
    ...over,
  };
}

/** A step test that ran: its record, and the framework's state of the test. */
function ran(
  storyboard: StoryboardInfo,
  step_id: string,
  options: { project?: string; over?: Partial<StepResult>; state?: ReportTest['state']; errors?: string[] } = {},
): ReportTest {
  const record = result(storyboard, step_id, options.over);
  const status = record.skip ? 'skipped' : record.passed ? 'passed' : 'failed';
  return {
    project: options.project ?? '',
    file: storyboard.file,
    name: step_id,
    state: options.state ?? status,
    errors: options.errors ?? [],
    meta: { adcp: { id: `${storyboard.id}/p/${step_id}`, status, result: record, storyboard } },
  };
}

/** A step test planned at collection that did not run. */
const planned = (storyboard: StoryboardInfo, step_id: string, project = ''): ReportTest => ({
  project,
  file: storyboard.file,
  name: step_id,
  state: 'skipped',
  errors: [],
  meta: { adcpPlanned: { storyboard, phase_id: 'p', step_id, task: 'get_products' } },
});

const skipped = (detail: string): Partial<StepResult> => ({ skip: { reason: 'not_applicable', detail } });
const statusOf = (tests: ReportTest[]) => buildReport(tests, { root: ROOT }).storyboards.map((s) => s.status);

describe("a storyboard's status", () => {
  it('is not_run when none of its steps ran, incomplete when some did not, passed when all ran and passed', () => {
    const sb = info('sb');
    expect(statusOf([planned(sb, 'a'), planned(sb, 'b')])).toEqual(['not_run']);
    expect(statusOf([ran(sb, 'a'), planned(sb, 'b')])).toEqual(['incomplete']);
    expect(statusOf([ran(sb, 'a'), ran(sb, 'b')])).toEqual(['passed']);
  });

  it('is skipped when every step skipped, passed when only some did', () => {
    const sb = info('sb');
    expect(statusOf([ran(sb, 'a', { over: skipped('x') }), ran(sb, 'b', { over: skipped('y') })])).toEqual(['skipped']);
    expect(statusOf([ran(sb, 'a'), ran(sb, 'b', { over: skipped('y') })])).toEqual(['passed']);
  });

  it('is skipped, with the reason, when the storyboard was skipped as a whole', () => {
    const sb = info('empty');
    const skip: SkipResult = { reason: 'not_applicable', detail: 'no_phases: the storyboard has no phases' };
    const report = buildReport(
      [
        {
          project: '',
          file: sb.file,
          name: 'no phases',
          state: 'skipped',
          errors: [],
          meta: { adcpStoryboard: { storyboard: sb, skip } },
        },
      ],
      { root: ROOT },
    );
    expect(report.storyboards).toEqual([
      expect.objectContaining({ storyboard_id: 'empty', status: 'skipped', skip, steps: [] }),
    ]);
  });
});

describe('a filtered run (-t): what the user selected, and nothing else, is graded', () => {
  it('reports a replayed step as replayed (not run, its outcome in the detail, its exchange kept) and counts it nowhere', () => {
    const sb = info('sb');
    const request = { transport: 'mcp', operation: 'get_products', payload: { brief: 'b' } } as StepResult['request'];
    const replayedFirst = result(sb, 'first', { duration_ms: 42, request });
    const second = ran(sb, 'second');
    second.meta.adcpReplayed = [{ id: 'sb/p/first', status: 'passed', result: replayedFirst, storyboard: sb }];
    const report = buildReport([planned(sb, 'first'), second], { root: ROOT, test_name_pattern: 'second' });
    // A storyboard of which a step ran only as set-up is not called passed on the selected subset.
    expect(report.storyboards[0]!.status).toBe('incomplete');
    expect(report.storyboards[0]!.steps[0]).toMatchObject({
      step_id: 'first',
      passed: false,
      duration_ms: 42,
      validations: [],
      request,
      not_run: {
        reason: 'replayed',
        detail:
          'replayed, not graded: its own test was filtered out (-t "second") and a selected step depends on it; it passed',
      },
    });
    expect(report.summary).toMatchObject({ total_steps: 1, steps_passed: 1, steps_failed: 0, steps_not_run: 1 });
    expect(report.run.complete).toBe(false);
  });

  it("says a replayed step's failure or skip in its detail, and the failure does not fail the run", () => {
    const sb = info('sb');
    const second = ran(sb, 'second');
    const third = ran(sb, 'third', { over: skipped('prerequisite') });
    second.meta.adcpReplayed = [
      {
        id: 'sb/p/first',
        status: 'failed',
        result: result(sb, 'first', { passed: false, error: 'boom' }),
        storyboard: sb,
      },
    ];
    third.meta.adcpReplayed = [
      { id: 'sb/p/zero', status: 'skipped', result: result(sb, 'zero', skipped('no tool')), storyboard: sb },
    ];
    const report = buildReport([planned(sb, 'zero'), planned(sb, 'first'), second, third], {
      root: ROOT,
      test_name_pattern: 'second|third',
    });
    const details = report.storyboards[0]!.steps.map((s) => (s as { not_run?: { detail: string } }).not_run?.detail);
    expect(details[0]).toMatch(/; it skipped \(not_applicable\): no tool$/);
    expect(details[1]).toMatch(/; it failed: boom$/);
    expect(report.summary).toMatchObject({ steps_passed: 1, steps_failed: 0, steps_skipped: 1, steps_not_run: 2 });
    expect(report.storyboards[0]!.status).toBe('incomplete');
  });

  it('lists the steps the filter left out as not selected (explicit_scope_excluded, citing -t), not as steps', () => {
    const sb = info('sb');
    const other = info('other');
    const report = buildReport([ran(sb, 'first'), planned(sb, 'second'), planned(other, 'a'), planned(other, 'b')], {
      root: ROOT,
      test_name_pattern: 'first',
    });
    // A storyboard the filter left out whole has no entry: one record for it, with its step count.
    expect(report.storyboards.map((s) => [s.storyboard_id, s.status, s.steps.map((x) => x.step_id)])).toEqual([
      ['sb', 'incomplete', ['first']],
    ]);
    const detail = 'outside the selected scope: the run was filtered by test name (-t "first")';
    expect(report.summary.not_selected).toEqual([
      expect.objectContaining({ storyboard_id: 'sb', phase_id: 'p', step_id: 'second', step_count: 1, detail }),
      expect.objectContaining({ storyboard_id: 'other', step_count: 2, reason: 'explicit_scope_excluded', detail }),
    ]);
    expect(report.summary.not_selected![1]).not.toHaveProperty('step_id');
    expect(report.summary).toMatchObject({ total_steps: 1, steps_passed: 1, steps_not_run: 0 });
    expect(report.summary.tracks[0]!.storyboards).toEqual([{ storyboard_id: 'sb', status: 'incomplete' }]);
    expect(report.run.complete).toBe(false);
  });

  it('are matched by project, storyboard and step: the same ids elsewhere are not selected', () => {
    const sb = info('sb');
    const twin = info('twin');
    const second = ran(sb, 'second', { project: 'a' });
    second.meta.adcpReplayed = [
      {
        id: 'sb/p/first',
        status: 'failed',
        result: result(sb, 'first', { passed: false, error: 'boom' }),
        storyboard: sb,
      },
    ];
    const report = buildReport(
      [
        planned(sb, 'first', 'a'),
        second,
        planned(sb, 'third', 'a'),
        // Another project running the same storyboard, and another storyboard with the same phase and step ids.
        planned(sb, 'first', 'b'),
        planned(twin, 'first', 'a'),
      ],
      { root: ROOT, test_name_pattern: 'second' },
    );
    expect(
      report.storyboards.map((s) => [
        s.project,
        s.storyboard_id,
        s.steps.map((x) => [x.step_id, (x as { not_run?: { reason: string } }).not_run?.reason ?? x.passed]),
      ]),
    ).toEqual([
      [
        'a',
        'sb',
        [
          ['first', 'replayed'],
          ['second', true],
        ],
      ],
    ]);
    expect(report.summary.not_selected!.map((n) => [n.project, n.storyboard_id, n.step_id ?? null])).toEqual([
      ['a', 'sb', 'third'],
      ['a', 'twin', null],
      ['b', 'sb', null],
    ]);
  });
});

describe('a step test the framework failed', () => {
  it('after the step passed (a hook, a user assertion) is failed, with the test reason', () => {
    const sb = info('sb');
    const report = buildReport(
      [
        ran(sb, 'hooked', { state: 'failed', errors: ['afterEach: expected 1 to be 2', 'second error'] }),
        ran(sb, 'silent', { state: 'failed' }),
      ],
      { root: ROOT },
    );
    expect(report.storyboards[0]!.steps.map((s) => [s.step_id, s.passed, s.error])).toEqual([
      ['hooked', false, 'the test failed after the step passed: afterEach: expected 1 to be 2'],
      ['silent', false, 'the test failed after the step passed: no reason given'],
    ]);
    expect(report.storyboards[0]!.status).toBe('failed');
  });

  it('keeps a step the contract skipped skipped', () => {
    const sb = info('sb');
    const report = buildReport([ran(sb, 'skip', { over: skipped('n/a'), state: 'failed', errors: ['late'] })], {
      root: ROOT,
    });
    expect(report.storyboards[0]!.steps[0]).toMatchObject({ passed: true, skip: { detail: 'n/a' } });
    expect(report.storyboards[0]!.steps[0]).not.toHaveProperty('error');
  });
});

describe('a planned step whose test did not run', () => {
  it('says it was not reached when no name filter was given, with no verdict', () => {
    const sb = info('sb');
    const report = buildReport([ran(sb, 'a'), planned(sb, 'b')], { root: ROOT });
    expect(report.storyboards[0]!.steps[1]).toMatchObject({
      step_id: 'b',
      task: 'get_products',
      passed: false,
      duration_ms: 0,
      validations: [],
      not_run: {
        reason: 'not_reached',
        detail: 'its test did not run (a line or name filter, .only elsewhere, or the run stopped before it)',
      },
    });
    expect(report.summary).toMatchObject({ total_steps: 1, steps_not_run: 1 });
    expect(report.run).toMatchObject({ complete: false, test_name_pattern: null });
  });
});

describe('a step whose call the run cancel aborted', () => {
  it("is not run (reason cancelled), counted nowhere, with what went out kept and the engine's reason", () => {
    const sb = info('sb');
    const detail =
      'cancelled: the run was cancelled while this step waited for the agent, so its call was aborted and it has no verdict';
    const request = { transport: 'mcp' as const, operation: 'get_products', payload: { brief: 'x' }, url: AGENT };
    const report = buildReport(
      [
        ran(sb, 'a'),
        ran(sb, 'b', { over: { passed: false, error: detail, cancelled: true, request }, state: 'failed' }),
      ],
      { root: ROOT },
    );
    const step = report.storyboards[0]!.steps[1]!;
    expect(step).toMatchObject({
      step_id: 'b',
      passed: false,
      validations: [],
      request,
      not_run: { reason: 'cancelled', detail },
    });
    expect(step).not.toHaveProperty('error');
    expect(step).not.toHaveProperty('cancelled');
    expect(report.summary).toMatchObject({ total_steps: 1, steps_failed: 0, steps_not_run: 1 });
    expect(report.run.complete).toBe(false);
  });
});

describe('entries and run targets', () => {
  it('are one per project × agent × protocol: the same storyboard against two agents, or over two protocols, never merges', () => {
    const sb = info('sb');
    const other = 'http://127.0.0.1:4200/mcp';
    const report = buildReport(
      [ran(sb, 's'), ran({ ...sb, agent_url: other }, 's'), ran({ ...sb, protocol: 'a2a' }, 's')],
      { root: ROOT },
    );
    expect(report.storyboards.map((s) => [s.storyboard_id, s.agent_url, s.protocol, s.steps.length])).toEqual([
      ['sb', AGENT, 'mcp', 1],
      ['sb', other, 'mcp', 1],
      ['sb', AGENT, 'a2a', 1],
    ]);
    expect(report.run.targets.map((t) => [t.agent_url, t.protocol])).toEqual([
      [AGENT, 'mcp'],
      [other, 'mcp'],
      [AGENT, 'a2a'],
    ]);
  });

  it('name each target once, as the first of its storyboards described it', () => {
    const report = buildReport(
      [ran(info('one'), 's'), ran(info('two'), 's'), ran(info('three', { corpus_version: '3.0.7' }), 's')],
      { root: ROOT },
    );
    expect(report.storyboards.map((s) => s.storyboard_id)).toEqual(['one', 'two', 'three']);
    expect(report.run.targets).toEqual([{ project: '', agent_url: AGENT, protocol: 'mcp', corpus_version: '3.0.6' }]);
  });

  it('are grouped by project, each project keeping its run order, whatever order the projects finished in', () => {
    const tests = [
      ran(info('c1'), 's', { project: 'c' }),
      ran(info('a1'), 's', { project: 'a' }),
      ran(info('b1'), 's', { project: 'b' }),
      ran(info('c2'), 's', { project: 'c' }),
      ran(info('a2'), 's', { project: 'a' }),
      ran(info('b2'), 's', { project: 'b' }),
      ran(info('a3'), 's', { project: 'a' }),
    ];
    const report = buildReport(tests, { root: ROOT });
    expect(report.storyboards.map((s) => s.storyboard_id)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'c1', 'c2']);
    expect(report.run.targets.map((t) => t.project)).toEqual(['a', 'b', 'c']);
    expect(report.summary.tracks.map((t) => t.project)).toEqual(['a', 'b', 'c']);
  });

  it('keep the file path relative to the root', () => {
    const report = buildReport([ran(info('sb'), 's')], { root: ROOT });
    expect(report.storyboards[0]!.file).toBe('storyboards/sb.yaml');
  });
});

describe('tracks', () => {
  it('group storyboards by project, agent and track; storyboards with no track share one "untracked" track', () => {
    const other = 'http://127.0.0.1:4200/mcp';
    const report = buildReport(
      [
        ran(info('core1'), 's'),
        ran(info('loose1', { track: undefined }), 's'),
        ran(info('core2'), 's'),
        // A track literally named "untracked" is the same track as no track: one entry, never two.
        ran(info('loose2', { track: 'untracked' }), 's'),
        ran(info('core3', { agent_url: other }), 's'),
        ran(info('core4'), 's', { project: 'q' }),
      ],
      { root: ROOT },
    );
    expect(
      report.summary.tracks.map((t) => [t.project, t.agent_url, t.track, t.storyboards.map((s) => s.storyboard_id)]),
    ).toEqual([
      ['', AGENT, 'core', ['core1', 'core2']],
      ['', AGENT, 'untracked', ['loose1', 'loose2']],
      ['', other, 'core', ['core3']],
      ['q', AGENT, 'core', ['core4']],
    ]);
  });

  const trackStatus = (tests: ReportTest[]) => {
    const [track, ...rest] = buildReport(tests, { root: ROOT }).summary.tracks;
    expect(rest).toEqual([]);
    return track!;
  };

  it('are incomplete when a storyboard did not run beside ones that passed, not_run when none ran', () => {
    expect(trackStatus([ran(info('a'), 's'), planned(info('b'), 's')]).status).toBe('incomplete');
    expect(trackStatus([ran(info('a'), 's'), ran(info('b'), 's'), planned(info('b'), 't')]).status).toBe('incomplete');
    expect(trackStatus([planned(info('a'), 's'), planned(info('b'), 's')]).status).toBe('not_run');
    expect(trackStatus([ran(info('a'), 's'), ran(info('b'), 's')]).status).toBe('passed');
  });

  it('are failed when any storyboard failed, whatever else did not run', () => {
    const track = trackStatus([
      planned(info('a'), 's'),
      ran(info('b'), 's', { over: { passed: false, error: 'x' } }),
      ran(info('c'), 's'),
    ]);
    expect(track.status).toBe('failed');
    expect(track.storyboards).toEqual([
      { storyboard_id: 'a', status: 'not_run' },
      { storyboard_id: 'b', status: 'failed' },
      { storyboard_id: 'c', status: 'passed' },
    ]);
  });

  it('are skipped when every storyboard skipped, with each distinct reason once', () => {
    const track = trackStatus([
      ran(info('a'), 's', { over: skipped('x') }),
      ran(info('a'), 't', { over: { skip: { reason: 'missing_tool', detail: 'y' } } }),
      ran(info('b'), 's', { over: skipped('z') }),
    ]);
    expect(track).toMatchObject({ status: 'skipped', skip_reasons: ['not_applicable', 'missing_tool'] });
    expect(trackStatus([ran(info('a'), 's', { over: skipped('x') }), ran(info('b'), 's')])).not.toHaveProperty(
      'skip_reasons',
    );
  });
});
