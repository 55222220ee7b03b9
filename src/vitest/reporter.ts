/**
 * `vitest-adcp/reporter`: writes the runner output contract JSON that AdCP
 * tooling consumes, from the step records each storyboard test carries in
 * `task.meta.adcp` (which survive worker → main process and blob
 * `--merge-reports`). As options, the same report object rendered as a
 * markdown summary (also appended to `$GITHUB_STEP_SUMMARY`) and as one
 * self-contained HTML file (markdown.ts, html.ts, written by write.ts, as the Jest
 * reporter's are).
 *
 * ```ts
 * // vitest.config.ts
 * test: { reporters: ['default', ['vitest-adcp/reporter', { outputFile: 'adcp-results.json' }]] }
 * ```
 */
import { resolve } from 'node:path';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';
import type { RuntimeConfig } from '../config.js';
import type { NotSelectedRecord } from '../model/records.js';
import type { NotApplicableStoryboard } from '../model/step-meta.js';
import { buildReport, type BuildOptions, type ReportTest, type RunModel } from '../report/build.js';
import { expectedContract, serialiseReport, type ContractReportJson } from '../report/contract.js';
import { runTarget, type RunTimes } from '../report/envelope.js';
import { ndjsonBeside, NdjsonStream } from '../report/ndjson.js';
import { claimSummary, renderTerminalSummary } from '../report/summary.js';
import { DEFAULT_REPORT_FILE, writeContractReport, writeReportViews } from '../report/write.js';

export interface AdcpReporterOptions {
  /**
   * Where to write the JSON, relative to the project root. Also settable as
   * Vitest's `outputFile['vitest-adcp']` (CLI: `--outputFile.vitest-adcp=…`).
   * @default 'adcp-results.json'
   */
  outputFile?: string;
  /**
   * Also write a markdown summary there (relative to the project root): the verdict, per-track and per-storyboard
   * status, each failed step's headline and YAML line. Off unless set. Also settable as Vitest's
   * `outputFile['vitest-adcp-markdown']` (CLI: `--outputFile.vitest-adcp-markdown=…`).
   */
  markdownFile?: string;
  /**
   * Append the markdown summary to the GitHub job summary (the file `$GITHUB_STEP_SUMMARY` names) when that variable
   * is set, i.e. in a GitHub Actions job.
   * @default true
   */
  jobSummary?: boolean;
  /**
   * Also write the HTML report there (relative to the project root): one self-contained file, no network — the
   * storyboard › phase › step tree with filters, each step's request, response, validations and YAML lines. Off unless
   * set. Also settable as Vitest's `outputFile['vitest-adcp-html']` (CLI: `--outputFile.vitest-adcp-html=…`).
   */
  htmlFile?: string;
  /**
   * Also stream the report as NDJSON while the run goes: one line per finished test (its step record, redacted like
   * the JSON), a first `run_start` and a last `run_end` line — a killed run keeps every line written before it died.
   * `true`: beside the JSON (`adcp-results.ndjson`); a string: that path, relative to the project root. Also settable
   * as Vitest's `outputFile['vitest-adcp-ndjson']`.
   * @default false
   */
  ndjson?: boolean | string;
}

export type {
  ContractReport,
  NotRunStep,
  ReportTest,
  RunModel,
  RunSummary,
  StoryboardReport,
  StoryboardStatus,
  TrackReport,
} from '../report/build.js';
export type { ContractReportJson, ContractReportV1, ContractReportV2 } from '../report/contract.js';
export type { RunEnvelope, RunTargetReport } from '../report/envelope.js';
export type { Notice, NotSelectedRecord, SelectionReason } from '../model/records.js';

/** Vitest's view of a test, as the framework-neutral record `buildReport` takes. */
function reportTest(test: TestCase, file: string): ReportTest {
  const result = test.result() as
    | { state?: ReportTest['state']; errors?: ReadonlyArray<{ message: string; name?: string; diff?: string }> }
    | undefined;
  return {
    // The fakes of in-process tests have no project: an unnamed one.
    project: (test as { project?: { name?: string } }).project?.name ?? '',
    file,
    name: test.name,
    state: result?.state ?? 'pending',
    // A storyboard error's message is its one-line headline (JUnit's message=); the details ride in `diff`.
    errors: (result?.errors ?? []).map((e) =>
      e.name === 'StoryboardStepError' && typeof e.diff === 'string' && e.diff ? `${e.message}\n${e.diff}` : e.message,
    ),
    meta: test.meta(),
  };
}

/**
 * The run model of a run's storyboard tests (the Vitest side of `buildReport`, build.ts), with the storyboards graded
 * not applicable before the run (`notApplicable`: no test of theirs ran), each skipped as a whole.
 */
function runModel(
  modules: ReadonlyArray<TestModule>,
  root: string,
  options: Omit<BuildOptions, 'root'> = {},
  notApplicable: readonly ReportTest[] = [],
): RunModel {
  const tests = modules.flatMap((module) =>
    [...module.children.allTests()].map((test) => reportTest(test, module.moduleId)),
  );
  return buildReport([...tests, ...notApplicable], { root, ...options });
}

/**
 * The contract report of a run's storyboard tests: its run model (build.ts) written out in the contract version the
 * run's corpus carries (contract.ts). With the run's Vitest, the storyboards its projects graded not applicable before
 * the run too.
 */
export function buildContractReport(
  modules: ReadonlyArray<TestModule>,
  root: string,
  times: Partial<RunTimes> = {},
  vitest?: Vitest,
): ContractReportJson {
  return serialiseReport(runModel(modules, root, times, providedByProjects(vitest).notApplicable));
}

/**
 * A storyboard a project graded not applicable before the run (plugin/up-front.ts), as the report takes a storyboard
 * skipped as a whole: the one test it would have had, skipped, carrying the skip (`adcpStoryboard`), named for the
 * agent and corpus the project was given.
 */
function notApplicableTest(project: string, item: NotApplicableStoryboard, config: RuntimeConfig): ReportTest {
  return {
    project,
    file: item.storyboard.file,
    name: `not applicable (${item.storyboard.id})`,
    state: 'skipped',
    errors: [],
    meta: { adcpStoryboard: { storyboard: { ...item.storyboard, ...runTarget(config) }, skip: item.skip } },
  };
}

/** What the run's projects were given by the plugin (`project.provide`), each project's: corpus version, selection. */
function providedByProjects(vitest: Vitest | undefined): {
  corpusVersions: (string | null)[];
  corpusChoices: (string | null)[];
  notSelected: NotSelectedRecord[];
  notApplicable: ReportTest[];
} {
  const corpusVersions: (string | null)[] = [];
  const corpusChoices: (string | null)[] = [];
  // A project inherits what the root project was given: one record per item, under the first project that has it.
  const notSelected = new Map<string, NotSelectedRecord>();
  const notApplicable = new Map<string, ReportTest>();
  // A run narrowed to files (`vitest run <file>`, an IDE's run of one file) reports the files it ran, not the
  // storyboards its selection graded before it (they are no files of the run to match).
  const toFiles = Boolean((vitest as { filenamePattern?: string[] } | undefined)?.filenamePattern?.length);
  // A fake Vitest (in-process tests) or an older one may have no projects to ask.
  for (const project of vitest?.projects ?? []) {
    const provided = project.getProvidedContext?.() as
      | {
          vitestAdcp?: RuntimeConfig;
          vitestAdcpNotSelected?: NotSelectedRecord[];
          vitestAdcpNotApplicable?: NotApplicableStoryboard[];
        }
      | undefined;
    if (!provided?.vitestAdcp) continue;
    corpusVersions.push(provided.vitestAdcp.corpusVersion ?? null);
    corpusChoices.push(provided.vitestAdcp.corpusChoice ?? null);
    for (const item of provided.vitestAdcpNotSelected ?? []) {
      const key = JSON.stringify(item);
      if (!notSelected.has(key)) notSelected.set(key, { project: project.name, ...item });
    }
    for (const item of toFiles ? [] : (provided.vitestAdcpNotApplicable ?? [])) {
      const key = JSON.stringify(item);
      if (!notApplicable.has(key)) notApplicable.set(key, notApplicableTest(project.name, item, provided.vitestAdcp));
    }
  }
  return {
    corpusVersions,
    corpusChoices,
    notSelected: [...notSelected.values()],
    notApplicable: [...notApplicable.values()],
  };
}

export default class AdcpReporter implements Reporter {
  private root = process.cwd();
  private vitest: Vitest | undefined;
  private outputFile: string | undefined;
  private log: (message: string) => void = () => {};

  private options: AdcpReporterOptions;

  constructor(options: AdcpReporterOptions = {}) {
    this.outputFile = options.outputFile;
    this.options = options;
  }

  private startedAt = new Date().toISOString();
  private testNamePattern: string | null = null;
  private stream: NdjsonStream | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
    this.root = vitest.config.root;
    this.startedAt = new Date().toISOString();
    this.testNamePattern = vitest.config.testNamePattern?.source ?? null;
    this.log = (message) => vitest.logger.log(message);
    const configured = vitest.config.outputFile;
    this.outputFile ??=
      (typeof configured === 'object' ? configured?.['vitest-adcp'] : undefined) ?? DEFAULT_REPORT_FILE;
    if (typeof configured === 'object') {
      this.options = {
        ...this.options,
        markdownFile: this.options.markdownFile ?? configured['vitest-adcp-markdown'],
        htmlFile: this.options.htmlFile ?? configured['vitest-adcp-html'],
      };
    }
    const ndjson =
      this.options.ndjson ?? (typeof configured === 'object' ? configured?.['vitest-adcp-ndjson'] : undefined);
    if (ndjson)
      this.stream = new NdjsonStream(
        resolve(this.root, typeof ndjson === 'string' ? ndjson : ndjsonBeside(this.outputFile)),
      );
  }

  onTestRunStart(): void {
    // Watch mode starts a run per change: each run has its own times and stream.
    this.startedAt = new Date().toISOString();
    if (this.stream) {
      const { corpusVersions, notApplicable } = providedByProjects(this.vitest);
      this.stream.start(this.startedAt, this.testNamePattern, expectedContract(this.root, corpusVersions));
      // Decided before the run: their lines come first.
      for (const test of notApplicable) this.stream.test(test, this.root);
    }
  }

  onTestCaseResult(test: TestCase): void {
    this.stream?.test(reportTest(test, test.module.moduleId), this.root);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const { corpusVersions, corpusChoices, notSelected, notApplicable } = providedByProjects(this.vitest);
    const model = runModel(
      modules,
      this.root,
      {
        started_at: this.startedAt,
        finished_at: new Date().toISOString(),
        test_name_pattern: this.testNamePattern,
        notSelected,
        configuredCorpusVersions: corpusVersions,
        corpusChoices,
      },
      notApplicable,
    );
    this.stream?.end(model);
    // The terminal summary (once per run end, whichever vitest-adcp reporter gets there first), then where files went.
    if (claimSummary(modules)) {
      const summary = renderTerminalSummary(model);
      if (summary) this.log(`\n${summary}`);
    }
    this.log(writeContractReport(serialiseReport(model), resolve(this.root, this.outputFile ?? DEFAULT_REPORT_FILE)));
    const { markdownFile, htmlFile, jobSummary } = this.options;
    for (const line of writeReportViews(model, { root: this.root, markdownFile, htmlFile, jobSummary })) this.log(line);
  }
}
