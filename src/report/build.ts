/**
 * The run model (model.ts) of the contract report, built from plain records of a run's tests — what any test
 * framework can hand over (Vitest's reporter, Jest's): the test's project, file, name, state, first error messages,
 * and the vitest-adcp meta the adapter attached (`adcp`, `adcpPlanned`, `adcpStoryboard`). Which contract version
 * the report follows is decided here (`reportContract`); contract.ts writes the model out in that version.
 *
 * Entries are keyed by project × agent × file × storyboard id: two Vitest
 * projects testing two agents with the same storyboard are two entries, never
 * one storyboard with two agents' steps in it.
 */
import { relative } from 'node:path';
import { isLoadFailureTest } from '../model/test-titles.js';
import type { NotSelectedRecord, StepResult } from '../model/records.js';
import type { AdcpPlannedStep, AdcpStepMeta, AdcpStoryboardMeta, StoryboardInfo } from '../model/step-meta.js';
import { CONTRACT_ID, reportContract } from './contract.js';
import { buildEnvelope, publicAgentUrl, toolVersion, type RunTargetReport, type RunTimes } from './envelope.js';
import type { NotRunStep, RunModel, RunSummary, StoryboardReport, StoryboardStatus, TrackReport } from './model.js';
import { redactStepResult, stepKey } from './record.js';

export type {
  ContractReport,
  NotRunStep,
  RunModel,
  RunSummary,
  StoryboardReport,
  StoryboardStatus,
  TrackReport,
} from './model.js';

/** One test of the run, as any framework can describe it. */
export interface ReportTest {
  /** The project (Vitest project, Jest `displayName`) it ran in; `''` when unnamed. */
  project: string;
  /** The test file (absolute). */
  file: string;
  name: string;
  /** `skipped`/`pending` for a test that did not run, or skipped itself. */
  state: 'passed' | 'failed' | 'skipped' | 'pending';
  /** The messages of its errors, first first. */
  errors: string[];
  meta: {
    adcp?: AdcpStepMeta;
    adcpPlanned?: AdcpPlannedStep;
    adcpStoryboard?: AdcpStoryboardMeta;
    adcpReplayed?: AdcpStepMeta[];
  };
}

export interface BuildOptions extends Partial<RunTimes> {
  /** Makes `file` paths relative. */
  root: string;
  /** What the run's selection left out before execution (contract 2.6.0 `not_selected`). */
  notSelected?: readonly NotSelectedRecord[];
  /**
   * The corpus versions the run's projects were configured with: the report's contract when no storyboard entry says
   * its own (a run whose every file failed to load).
   */
  configuredCorpusVersions?: readonly (string | null | undefined)[];
  /** Why each project took its corpus (`Corpus.choice`), as its plugin was configured: the envelope's `corpus_choice`. */
  corpusChoices?: readonly (string | null | undefined)[];
}

/**
 * The status of a storyboard not skipped as a whole, from its steps — never none: its entry was made by its first
 * step's test (a storyboard skipped as a whole is `skipped` without asking this).
 */
function storyboardStatus(steps: StepResult[]): StoryboardStatus {
  const ran = steps.filter((s) => !('not_run' in s));
  // storyboard-schema.yaml > Optional phase semantics: their failures do not fail the storyboard on their own.
  if (ran.some((s) => !s.passed && !s.skip && !s.optional)) return 'failed';
  if (ran.length === 0) return 'not_run';
  if (ran.length < steps.length) return 'incomplete';
  if (steps.every((s) => s.skip)) return 'skipped';
  return 'passed';
}

const targetKey = (project: string, info: StoryboardInfo) =>
  JSON.stringify([project, publicAgentUrl(info.agent_url ?? undefined), info.protocol ?? null]);
/** One storyboard file of one project × agent. */
const storyboardKey = (project: string, info: StoryboardInfo) =>
  `${targetKey(project, info)}\u0000${info.file}#${info.id}`;

/**
 * Builds the run model from the tests of a run; contract.ts `serialiseReport` writes it out. Pure but for the clock
 * when no times are given.
 */
export function buildReport(input: Iterable<ReportTest>, options: BuildOptions): RunModel {
  const { root } = options;
  const tests = [...input];
  // Steps a settle ran while their own tests were filtered out (`-t`): they called the agent, so they keep their verdict.
  const replayed = new Map<string, AdcpStepMeta>();
  for (const test of tests)
    for (const meta of test.meta.adcpReplayed ?? [])
      replayed.set(`${storyboardKey(test.project, meta.storyboard)}/${stepKey(meta.result)}`, meta);
  const byStoryboard = new Map<string, StoryboardReport>();
  const targets = new Map<string, RunTargetReport>();
  const loadErrors: RunModel['load_errors'] = [];
  const reportFor = (project: string, info: StoryboardInfo): StoryboardReport => {
    const key = storyboardKey(project, info);
    let report = byStoryboard.get(key);
    if (!report) {
      const agent_url = publicAgentUrl(info.agent_url ?? undefined);
      report = {
        storyboard_id: info.id,
        title: info.title,
        ...(info.version ? { version: info.version } : {}),
        ...(info.track ? { track: info.track } : {}),
        file: relative(root, info.file),
        project,
        agent_url,
        protocol: info.protocol ?? null,
        ...(info.corpus_version ? { corpus_version: info.corpus_version } : {}),
        status: 'passed',
        steps: [],
      };
      byStoryboard.set(key, report);
      const target = targetKey(project, info);
      if (!targets.has(target))
        targets.set(target, {
          project,
          agent_url,
          protocol: info.protocol ?? null,
          corpus_version: info.corpus_version ?? null,
        });
    }
    return report;
  };
  const ranSilently = (project: string, planned: AdcpPlannedStep) =>
    replayed.get(
      `${storyboardKey(project, planned.storyboard)}/${stepKey({ storyboard_id: planned.storyboard.id, phase_id: planned.phase_id, step_id: planned.step_id })}`,
    );
  for (const test of tests) {
    const whole = test.meta.adcpStoryboard;
    if (whole) {
      reportFor(test.project, whole.storyboard).skip = whole.skip;
      continue;
    }
    const entry = stepEntry(test, (planned) => ranSilently(test.project, planned), options.test_name_pattern ?? null);
    if (entry) reportFor(test.project, entry.storyboard).steps.push(entry.step);
    else if (isLoadFailureTest(test.file, test.name)) {
      // A storyboard file that failed to load compiles to one test named after the rule.
      loadErrors.push({ file: relative(root, test.file), message: test.errors[0] ?? test.name, project: test.project });
    }
  }
  // Grouped by project (stable, so each project keeps its run order): projects run in parallel, and the order their
  // results arrive in is not the report's business.
  const byProject = (a: { project: string }, b: { project: string }) =>
    a.project < b.project ? -1 : a.project > b.project ? 1 : 0;
  const planned = [...byStoryboard.values()].sort(byProject);
  // Status from every planned step (a storyboard with steps left out is `incomplete`, never `passed` on a subset), then
  // the steps a `-t` filter left out leave the entries for `not_selected` (contract 2.6.0: "Not-selected steps are not
  // step results").
  for (const report of planned) report.status = report.skip ? 'skipped' : storyboardStatus(report.steps);
  const { storyboards, notSelected } = withoutFilteredSteps(planned, options.test_name_pattern ?? null);
  const now = new Date().toISOString();
  const runTargets = [...targets.values()].sort(byProject);
  const summary = runSummary(storyboards, [...(options.notSelected ?? []), ...notSelected]);
  return {
    contract: { id: CONTRACT_ID, version: reportContract(corporaOf(runTargets, options)) },
    runner: { name: 'vitest-adcp', version: toolVersion() },
    generated_at: now,
    run: buildEnvelope(
      runTargets,
      {
        started_at: options.started_at ?? now,
        finished_at: options.finished_at ?? now,
        test_name_pattern: options.test_name_pattern ?? null,
      },
      summary.steps_not_run === 0 && notSelected.length === 0,
      options.corpusChoices,
    ),
    summary,
    storyboards,
    load_errors: loadErrors,
  };
}

/** The corpus versions that decide the report's contract: its targets', else those its projects were given. */
function corporaOf(targets: RunTargetReport[], options: BuildOptions): readonly (string | null | undefined)[] {
  return targets.length ? targets.map((t) => t.corpus_version) : (options.configuredCorpusVersions ?? []);
}

/** The run summary of the model: steps counted by verdict, tracks, the schemas applied, what selection left out. */
function runSummary(storyboards: StoryboardReport[], notSelected: BuildOptions['notSelected']): RunSummary {
  const all = storyboards.flatMap((s) => s.steps);
  const steps = all.filter((s) => !('not_run' in s));
  const schemas = new Map<string, string>();
  // Every schema the run applied — response_schema, a webhook's payload schema —, not the presumed identity a failed
  // validation names for a schema that was not found (runner-output-contract.yaml: "the exact artifacts the runner
  // applied").
  for (const step of steps) {
    for (const v of step.validations)
      if (v.schema_id && v.schema_url && !schemaNotFound(v)) schemas.set(v.schema_id, v.schema_url);
  }
  return {
    total_steps: steps.length,
    steps_passed: steps.filter((s) => s.passed && !s.skip).length,
    steps_failed: steps.filter((s) => !s.passed && !s.skip).length,
    steps_skipped: steps.filter((s) => s.skip).length,
    steps_not_run: all.length - steps.length,
    tracks: tracks(storyboards),
    schemas_used: [...schemas]
      .map(([schema_id, schema_url]) => ({ schema_id, schema_url }))
      .sort((a, b) => a.schema_id.localeCompare(b.schema_id)),
    ...(notSelected?.length ? { not_selected: [...notSelected] } : {}),
  };
}

/**
 * A step test's entry in its storyboard, or undefined for a test that is no step's. `ranSilently`: the record of the
 * step when another test's settle replayed it.
 */
function stepEntry(
  test: ReportTest,
  ranSilently: (planned: AdcpPlannedStep) => AdcpStepMeta | undefined,
  pattern: string | null,
): { storyboard: StoryboardInfo; step: StepResult } | undefined {
  const { adcp, adcpPlanned: planned } = test.meta;
  if (adcp?.result.cancelled) return { storyboard: adcp.storyboard, step: cancelledStep(adcp.result) };
  if (adcp) return { storyboard: adcp.storyboard, step: reconciledStep(adcp.result, test) };
  if (!planned) return undefined;
  // The test ended before the engine answered (its timeout, a crash): failed, with the framework's reason — never dropped.
  if (test.state === 'failed') return { storyboard: planned.storyboard, step: cutShort(planned, test.errors[0]) };
  // Its test was filtered out, but a selected step depends on it, so a settle ran it (`-t`): reported as replayed, its
  // outcome said, and not counted — the run's verdict is the selected steps' (issue 31: a filtered run reports what was
  // asked).
  const replay = ranSilently(planned);
  if (replay) return { storyboard: replay.storyboard, step: replayedStep(planned, replay.result, pattern) };
  // Planned at collection, never run: a `-t` / line filter, or a run that stopped before it.
  return { storyboard: planned.storyboard, step: notRun(planned, pattern) };
}

/**
 * A step's entry from its record and the framework's state of its test — the one rule for when they disagree, the
 * same under every framework. The test's state wins when the test failed: a step the engine passed but whose test a
 * hook (`afterEach`), a user assertion or the framework itself failed is failed, with the test's reason, so the report
 * agrees with the terminal. Otherwise the record's status stands: a step the contract skips stays skipped though its
 * test passed (Jest cannot skip a test once it runs).
 */
function reconciledStep(record: StepResult, test: Pick<ReportTest, 'state' | 'errors'>): StepResult {
  // Records are redacted in the worker already; again here, so no path skips it.
  const step = redactStepResult(record);
  if (test.state === 'failed' && step.passed && !step.skip) {
    step.passed = false;
    step.error = `the test failed after the step passed: ${test.errors[0] ?? 'no reason given'}`;
  }
  return step;
}

function bareStep(planned: AdcpPlannedStep): StepResult {
  return {
    storyboard_id: planned.storyboard.id,
    phase_id: planned.phase_id,
    step_id: planned.step_id,
    task: planned.task ?? 'unknown',
    passed: false,
    duration_ms: 0,
    validations: [],
    extraction: { path: 'none' },
  };
}

/** The record of a step whose test the framework ended before the engine gave a verdict. */
function cutShort(planned: AdcpPlannedStep, reason: string | undefined): StepResult {
  return {
    ...bareStep(planned),
    error: `the test ended before the step had a verdict: ${reason ?? 'no reason given'} (if Vitest's timeout fired, raise testTimeout above the step bound timeoutMs)`,
  };
}

/** The record of a planned step whose test did not run: no verdict, and said so. */
function notRun(planned: AdcpPlannedStep, pattern: string | null): NotRunStep {
  return {
    ...bareStep(planned),
    not_run: pattern
      ? {
          reason: 'filtered',
          detail: `its test did not run: the run was filtered (-t ${JSON.stringify(pattern)})`,
        }
      : {
          reason: 'not_reached',
          detail: 'its test did not run (a line or name filter, .only elsewhere, or the run stopped before it)',
        },
  };
}

/**
 * The entry of a step whose call the run's cancel aborted (the bin's SIGINT/SIGTERM): no verdict — the agent was not
 * at fault — so not run, with what went out kept and the engine's reason as the detail.
 */
function cancelledStep(record: StepResult): NotRunStep {
  const { error, cancelled: _marker, ...rest } = redactStepResult(record);
  return { ...rest, validations: [], not_run: { reason: 'cancelled', detail: error ?? 'the run was cancelled' } };
}

/** What a replayed step came to, in a few words: its verdict and, when it did not pass, the first reason. */
function outcomeOf(record: StepResult): string {
  if (record.skip) return `skipped (${record.skip.reason}): ${record.skip.detail}`;
  if (record.passed) return 'passed';
  const failed = record.validations.find((v) => !v.passed && v.severity !== 'advisory');
  return `failed: ${record.error ?? failed?.error ?? failed?.description ?? 'no reason given'}`;
}

/** The entry of a step run only to set up a selected step: no verdict of its own here, its outcome in the detail. */
function replayedStep(planned: AdcpPlannedStep, record: StepResult, pattern: string | null): NotRunStep {
  const redacted = redactStepResult({ ...record, error: outcomeOf(record) });
  const outcome = redacted.error!;
  return {
    ...bareStep(planned),
    task: record.task,
    duration_ms: record.duration_ms,
    // What went out and came back stays readable (redacted like every record); the verdict is in the detail only.
    extraction: redacted.extraction,
    ...(redacted.request ? { request: redacted.request } : {}),
    ...(redacted.response ? { response: redacted.response } : {}),
    not_run: {
      reason: 'replayed',
      detail: `replayed, not graded: its own test was filtered out${pattern ? ` (-t ${JSON.stringify(pattern)})` : ''} and a selected step depends on it; it ${outcome}`,
    },
  };
}

const isFiltered = (step: StepResult) => (step as Partial<NotRunStep>).not_run?.reason === 'filtered';

/**
 * The entries without the steps a `-t` filter left out, and those steps as `not_selected` records
 * (runner-output-contract.yaml 2.6.0 > selection_result > explicit_scope_excluded: "detail MUST cite the selected
 * scope"): one record for a storyboard left out whole (and no entry for it), one per step otherwise.
 */
function withoutFilteredSteps(
  planned: StoryboardReport[],
  pattern: string | null,
): { storyboards: StoryboardReport[]; notSelected: NotSelectedRecord[] } {
  const notSelected: NotSelectedRecord[] = [];
  const storyboards: StoryboardReport[] = [];
  const detail = `outside the selected scope: the run was filtered by test name (-t ${JSON.stringify(pattern ?? '')})`;
  for (const report of planned) {
    const filtered = report.steps.filter(isFiltered);
    const identity = {
      storyboard_id: report.storyboard_id,
      title: report.title,
      ...(report.track ? { track: report.track } : {}),
      file: report.file,
      project: report.project,
      reason: 'explicit_scope_excluded' as const,
      detail,
    };
    if (filtered.length > 0 && filtered.length === report.steps.length && !report.skip) {
      notSelected.push({ ...identity, step_count: filtered.length });
      continue;
    }
    for (const step of filtered)
      notSelected.push({ ...identity, phase_id: step.phase_id, step_id: step.step_id, step_count: 1 });
    storyboards.push(filtered.length ? { ...report, steps: report.steps.filter((s) => !isFiltered(s)) } : report);
  }
  return { storyboards, notSelected };
}

function tracks(storyboards: StoryboardReport[]): TrackReport[] {
  const grouped = new Map<string, StoryboardReport[]>();
  for (const s of storyboards) {
    const key = JSON.stringify([s.project, s.agent_url, s.track ?? 'untracked']);
    grouped.set(key, [...(grouped.get(key) ?? []), s]);
  }
  return [...grouped.values()].map((members) => {
    const { project, agent_url } = members[0]!;
    const track = members[0]!.track ?? 'untracked';
    const has = (status: StoryboardStatus) => members.some((m) => m.status === status);
    const status: StoryboardStatus = has('failed')
      ? 'failed'
      : members.every((m) => m.status === 'skipped')
        ? 'skipped'
        : members.every((m) => m.status === 'not_run')
          ? 'not_run'
          : has('incomplete') || has('not_run')
            ? 'incomplete'
            : 'passed';
    const report: TrackReport = {
      track,
      project,
      agent_url,
      status,
      storyboards: members.map((m) => ({ storyboard_id: m.storyboard_id, status: m.status })),
    };
    if (status === 'skipped')
      report.skip_reasons = [
        ...new Set(members.flatMap((m) => (m.skip ? [m.skip.reason] : m.steps.map((s) => s.skip!.reason)))),
      ];
    return report;
  });
}

function schemaNotFound(v: { actual?: unknown }): boolean {
  const actual = v.actual as { reason?: unknown; observed?: { reason?: unknown } } | null | undefined;
  return actual?.reason === 'schema_not_found' || actual?.observed?.reason === 'schema_not_found';
}
