/**
 * `vitest-adcp/reporter`: writes the runner output contract JSON that AdCP
 * tooling consumes, from the step records each storyboard test carries in
 * `task.meta.adcp` (which survive worker → main process and blob
 * `--merge-reports`).
 *
 * ```ts
 * // vitest.config.ts
 * test: { reporters: ['default', ['vitest-adcp/reporter', { outputFile: 'adcp-results.json' }]] }
 * ```
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import type { SkipReason, SkipResult, StepResult } from '../engine/records.js';
import type { AdcpPlannedStep, AdcpStepMeta, AdcpStoryboardMeta, StoryboardInfo } from '../vitest/meta.js';
import { redactStepResult } from './record.js';

export interface AdcpReporterOptions {
  /**
   * Where to write the JSON, relative to the project root. Also settable as
   * Vitest's `outputFile['vitest-adcp']` (CLI: `--outputFile.vitest-adcp=…`).
   * @default 'adcp-results.json'
   */
  outputFile?: string;
}

export type StoryboardStatus = 'passed' | 'failed' | 'skipped';

export interface StoryboardReport {
  storyboard_id: string;
  title: string;
  version?: string;
  track?: string;
  /** Project-relative path of the YAML file. */
  file: string;
  status: StoryboardStatus;
  /** When the storyboard was skipped as a whole (e.g. `no_phases`). */
  skip?: SkipResult;
  steps: StepResult[];
}

export interface TrackReport {
  track: string;
  status: StoryboardStatus;
  storyboards: { storyboard_id: string; status: StoryboardStatus }[];
  /** When every storyboard of the track skipped: the reasons, as the contract's skip distinctions. */
  skip_reasons?: SkipReason[];
}

export interface RunSummary {
  total_steps: number;
  steps_passed: number;
  steps_failed: number;
  steps_skipped: number;
  tracks: TrackReport[];
  schemas_used: { schema_id: string; schema_url: string }[];
}

export interface ContractReport {
  contract: { id: 'runner_output_contract'; version: '1.1.0' };
  runner: { name: 'vitest-adcp'; version: string };
  generated_at: string;
  summary: RunSummary;
  storyboards: StoryboardReport[];
  /** Storyboard files that did not load (no steps ran). */
  load_errors: { file: string; message: string }[];
}

const RUNNER_VERSION = '0.1.0';

function storyboardStatus(steps: StepResult[]): StoryboardStatus {
  // storyboard-schema.yaml > Optional phase semantics: their failures do not fail the storyboard on their own.
  if (steps.some((s) => !s.passed && !s.skip && !s.optional)) return 'failed';
  if (steps.length > 0 && steps.every((s) => s.skip)) return 'skipped';
  return 'passed';
}

/** Builds the report from the storyboard tests of a run. Pure: exported for tests and other frameworks' adapters. */
export function buildContractReport(modules: ReadonlyArray<TestModule>, root: string): ContractReport {
  const byStoryboard = new Map<string, StoryboardReport>();
  const loadErrors: ContractReport['load_errors'] = [];
  const reportFor = (info: StoryboardInfo): StoryboardReport => {
    const key = `${info.file}#${info.id}`;
    let report = byStoryboard.get(key);
    if (!report) {
      report = {
        storyboard_id: info.id,
        title: info.title,
        ...(info.version ? { version: info.version } : {}),
        ...(info.track ? { track: info.track } : {}),
        file: relative(root, info.file),
        status: 'passed',
        steps: [],
      };
      byStoryboard.set(key, report);
    }
    return report;
  };
  for (const module of modules) {
    for (const test of module.children.allTests()) {
      const whole = test.meta().adcpStoryboard as AdcpStoryboardMeta | undefined;
      if (whole) {
        reportFor(whole.storyboard).skip = whole.skip;
        continue;
      }
      const meta = test.meta().adcp as AdcpStepMeta | undefined;
      const planned = test.meta().adcpPlanned as AdcpPlannedStep | undefined;
      const outcome = test.result();
      if (!meta && planned && outcome.state === 'failed') {
        // Vitest ended the test before the engine answered (its timeout, a crash): failed, with Vitest's reason — never dropped.
        reportFor(planned.storyboard).steps.push(cutShort(planned, outcome.errors?.[0]?.message));
        continue;
      }
      if (!meta) {
        // A storyboard file that failed to load compiles to one test named after the rule.
        if (/\.ya?ml$/.test(module.moduleId) && test.name.startsWith('loads without errors')) {
          const error = test.result().errors?.[0];
          loadErrors.push({ file: relative(root, module.moduleId), message: error?.message ?? test.name });
        }
        continue;
      }
      const report = reportFor(meta.storyboard);
      // Records are redacted in the worker already; again here, so no path skips it.
      const step = redactStepResult(meta.result);
      // The report agrees with the terminal: a step Vitest failed after the engine passed it (e.g. an afterEach) is failed.
      if (outcome.state === 'failed' && step.passed && !step.skip) {
        step.passed = false;
        step.error = `the test failed after the step passed: ${outcome.errors?.[0]?.message ?? 'no reason given'}`;
      }
      report.steps.push(step);
    }
  }
  const storyboards = [...byStoryboard.values()];
  for (const report of storyboards) report.status = report.skip ? 'skipped' : storyboardStatus(report.steps);
  const steps = storyboards.flatMap((s) => s.steps);
  const schemas = new Map<string, string>();
  for (const step of steps) {
    for (const v of step.validations) if (v.check === 'response_schema' && v.schema_id && v.schema_url) schemas.set(v.schema_id, v.schema_url);
  }
  return {
    contract: { id: 'runner_output_contract', version: '1.1.0' },
    runner: { name: 'vitest-adcp', version: RUNNER_VERSION },
    generated_at: new Date().toISOString(),
    summary: {
      total_steps: steps.length,
      steps_passed: steps.filter((s) => s.passed && !s.skip).length,
      steps_failed: steps.filter((s) => !s.passed && !s.skip).length,
      steps_skipped: steps.filter((s) => s.skip).length,
      tracks: tracks(storyboards),
      schemas_used: [...schemas].map(([schema_id, schema_url]) => ({ schema_id, schema_url })).sort((a, b) => a.schema_id.localeCompare(b.schema_id)),
    },
    storyboards,
    load_errors: loadErrors,
  };
}

/** The record of a step whose test Vitest ended before the engine gave a verdict. */
function cutShort(planned: AdcpPlannedStep, reason: string | undefined): StepResult {
  return {
    storyboard_id: planned.storyboard.id,
    phase_id: planned.phase_id,
    step_id: planned.step_id,
    task: planned.task ?? 'unknown',
    passed: false,
    duration_ms: 0,
    validations: [],
    extraction: { path: 'none' },
    error: `the test ended before the step had a verdict: ${reason ?? 'no reason given'} (if Vitest's timeout fired, raise testTimeout above the step bound timeoutMs)`,
  };
}

function tracks(storyboards: StoryboardReport[]): TrackReport[] {
  const grouped = new Map<string, StoryboardReport[]>();
  for (const s of storyboards) {
    const track = s.track ?? 'untracked';
    grouped.set(track, [...(grouped.get(track) ?? []), s]);
  }
  return [...grouped].map(([track, members]) => {
    const status: StoryboardStatus = members.some((m) => m.status === 'failed') ? 'failed' : members.every((m) => m.status === 'skipped') ? 'skipped' : 'passed';
    const report: TrackReport = { track, status, storyboards: members.map((m) => ({ storyboard_id: m.storyboard_id, status: m.status })) };
    if (status === 'skipped') report.skip_reasons = [...new Set(members.flatMap((m) => (m.skip ? [m.skip.reason] : m.steps.map((s) => s.skip!.reason))))];
    return report;
  });
}

export default class AdcpReporter implements Reporter {
  private root = process.cwd();
  private outputFile: string | undefined;
  private log: (message: string) => void = () => {};

  constructor(options: AdcpReporterOptions = {}) {
    this.outputFile = options.outputFile;
  }

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    this.log = (message) => vitest.logger.log(message);
    const configured = vitest.config.outputFile;
    this.outputFile ??= (typeof configured === 'object' ? configured?.['vitest-adcp'] : undefined) ?? 'adcp-results.json';
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const report = buildContractReport(modules, this.root);
    const file = resolve(this.root, this.outputFile ?? 'adcp-results.json');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
    const { total_steps, steps_passed, steps_failed, steps_skipped } = report.summary;
    this.log(`vitest-adcp: runner output contract report (${total_steps} steps: ${steps_passed} passed, ${steps_failed} failed, ${steps_skipped} skipped) written to ${relative(process.cwd(), file) || file}`);
  }
}
