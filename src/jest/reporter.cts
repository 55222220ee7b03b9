/**
 * `vitest-adcp/jest/reporter`: the runner output contract report of a Jest run, built by the same builder as the
 * Vitest reporter's (src/report/build.ts) from the same step records.
 *
 *   // jest.config.js
 *   reporters: ['default', ['vitest-adcp/jest/reporter', { outputFile: 'reports/adcp.json' }]]
 *
 * The records come from vitest-adcp's test environment (records.cts says how); each step becomes the test Vitest's
 * reporter would hand over (its record, its plan, Jest's state of its test), and report/build.ts reconciles the two
 * by the same rule under both frameworks: a step Jest filtered out (`-t`) is "not run", one Jest ended before the
 * engine answered or failed after the engine passed it (an `afterEach`) is failed with Jest's reason, a step the
 * contract skips (a passing test under Jest, which cannot skip a started one) stays skipped, and a storyboard file that
 * does not load is a load error.
 */
import type { ReportTest } from '../report/build.js' with { 'resolution-mode': 'import' };
import type { AdcpPlannedStep } from '../model/step-meta.js' with { 'resolution-mode': 'import' };
import type { JestFileRecords } from './suite.js' with { 'resolution-mode': 'import' };

const { mkdtempSync, readFileSync, rmSync } = require('node:fs') as typeof import('node:fs');
const { tmpdir } = require('node:os') as typeof import('node:os');
const nodePath = require('node:path') as typeof import('node:path');
const { RECORDS_DIR_ENV, recordsFile } = require('./records.cjs') as {
  RECORDS_DIR_ENV: string;
  recordsFile: (dir: string, testPath: string) => string;
};
// Node's require of an ES module (Node ≥ 20.19 / 22.12), as the environment loads the adapter.
const { buildReport } = require('../report/build.js') as typeof import('../report/build.js');
const { expectedContract, serialiseReport } =
  require('../report/contract.js') as typeof import('../report/contract.js');
const { isLoadFailureTest, isTitleOf } = require('../model/test-titles.js') as typeof import('../model/test-titles.js');
const { DEFAULT_REPORT_FILE, writeContractReport, writeReportViews } =
  require('../report/write.js') as typeof import('../report/write.js');
const { ndjsonBeside, NdjsonStream } = require('../report/ndjson.js') as typeof import('../report/ndjson.js');
const { renderTerminalSummary } = require('../report/summary.js') as typeof import('../report/summary.js');

export interface AdcpJestReporterOptions {
  /** Where the contract report goes, relative to Jest's rootDir. @default 'adcp-results.json' */
  outputFile?: string;
  /** Also write the markdown summary there (relative to rootDir), as the Vitest reporter's `markdownFile`. */
  markdownFile?: string;
  /** Append the markdown summary to the GitHub job summary when `$GITHUB_STEP_SUMMARY` is set. @default true */
  jobSummary?: boolean;
  /** Also write the self-contained HTML report there (relative to rootDir), as the Vitest reporter's `htmlFile`. */
  htmlFile?: string;
  /**
   * Also stream the report as NDJSON while the run goes, as the Vitest reporter's `ndjson` — here a test file's lines
   * when the file ends (Jest reports a file's results together). `true`: beside the JSON; a string: that path.
   */
  ndjson?: boolean | string;
}

interface AssertionLike {
  title: string;
  ancestorTitles: string[];
  status: string;
  failureMessages: string[];
  /** The thrown values (Jest ≥ 26), serialised from the worker: an Error's `message` without Jest's stack. */
  failureDetails?: unknown[];
}

/**
 * The framework's own state of a step's test. A test Jest did not run (filtered) but whose step has a record was
 * replayed or settled by another test: the record speaks for it.
 */
function testState(assertion: AssertionLike | undefined, recorded: boolean): ReportTest['state'] {
  if (assertion?.status === 'failed') return 'failed';
  if (assertion?.status === 'passed' || (!assertion && recorded)) return 'passed';
  return 'pending';
}

/**
 * The messages of a test's errors as Vitest reports them: the thrown error's message, without the stack Jest's
 * failure message appends.
 */
function errorMessages(assertion: AssertionLike): string[] {
  return assertion.failureMessages.map((text, i) => {
    const detail = assertion.failureDetails?.[i] as { message?: unknown } | undefined;
    if (detail && typeof detail.message === 'string' && detail.message) return detail.message;
    const beforeStack = text.split(/\n\s+at /)[0]!;
    return beforeStack.replace(/^\w*Error: /, '');
  });
}

class AdcpJestReporter {
  private readonly rootDir: string;
  private readonly outputFile: string;
  private readonly views: AdcpJestReporterOptions;
  private readonly stream: InstanceType<typeof NdjsonStream> | undefined;
  private readonly recordsDir: string;
  private readonly testNamePattern: string | null;
  private readonly tests: ReportTest[] = [];
  /** The corpus choices the workers' files report (`run.corpus_choice` when they agree). */
  private readonly corpusChoices = new Set<string>();
  private startedAt = new Date().toISOString();

  constructor(
    globalConfig: { rootDir: string; testNamePattern?: string | null },
    options: AdcpJestReporterOptions = {},
  ) {
    this.rootDir = globalConfig.rootDir;
    this.testNamePattern = globalConfig.testNamePattern || null;
    this.outputFile = nodePath.resolve(this.rootDir, options.outputFile ?? DEFAULT_REPORT_FILE);
    this.views = { markdownFile: options.markdownFile, htmlFile: options.htmlFile, jobSummary: options.jobSummary };
    if (options.ndjson)
      this.stream = new NdjsonStream(
        nodePath.resolve(
          this.rootDir,
          typeof options.ndjson === 'string' ? options.ndjson : ndjsonBeside(this.outputFile),
        ),
      );
    // Before any worker starts: Jest's workers inherit this process's environment.
    this.recordsDir = mkdtempSync(nodePath.join(tmpdir(), 'vitest-adcp-jest-records-'));
    process.env[RECORDS_DIR_ENV] = this.recordsDir;
  }

  onRunStart(): void {
    this.startedAt = new Date().toISOString();
    // The corpus the preset's workers take when its options name none (ADCP_COMPLIANCE, else the installed default).
    this.stream?.start(this.startedAt, this.testNamePattern, expectedContract(this.rootDir));
  }

  onTestFileResult(
    test: { path: string; context?: { config?: { displayName?: { name?: string } | string } } },
    result: { testFilePath: string; testResults: AssertionLike[] },
  ): void {
    const displayName = test.context?.config?.displayName;
    const project = (typeof displayName === 'string' ? displayName : displayName?.name) ?? '';
    const first = this.tests.length;
    const file = recordsFile(this.recordsDir, result.testFilePath);
    let records: JestFileRecords = { planned: [], steps: [], storyboards: [] };
    try {
      records = JSON.parse(readFileSync(file, 'utf8')) as JestFileRecords;
      rmSync(file, { force: true });
    } catch {
      // no storyboard ran in this file (a user's own test, or a storyboard that did not load)
    }
    if (records.corpusChoice) this.corpusChoices.add(records.corpusChoice);
    const byStep = new Map(records.steps.map((meta) => [meta.adcp.id, meta]));
    const assertionOf = (planned: AdcpPlannedStep) =>
      result.testResults.find(
        (a) => isTitleOf(a.title, planned.step_id) && a.ancestorTitles.some((t) => isTitleOf(t, planned.phase_id)),
      );
    // As Vitest's tasks: one test per planned step (injected ones included), carrying its record when it ran; the
    // report reconciles the record with the test's own state (report/build.ts `reconciledStep`).
    for (const planned of records.planned) {
      const meta = byStep.get(`${planned.storyboard.id}/${planned.phase_id}/${planned.step_id}`);
      const assertion = assertionOf(planned);
      this.tests.push({
        project,
        file: planned.storyboard.file,
        name: assertion?.title ?? planned.step_id,
        state: testState(assertion, meta !== undefined),
        errors: assertion ? errorMessages(assertion) : [],
        meta: { ...meta, adcpPlanned: planned },
      });
    }
    // Storyboards skipped as a whole (no phases): their placeholder test, as under Vitest.
    for (const meta of records.storyboards ?? [])
      this.tests.push({
        project,
        file: meta.storyboard.file,
        name: `no phases (${meta.storyboard.id})`,
        state: 'skipped',
        errors: [],
        meta: { adcpStoryboard: meta },
      });
    if (records.planned.length === 0) {
      for (const a of result.testResults) {
        if (isLoadFailureTest(result.testFilePath, a.title))
          this.tests.push({
            project,
            file: result.testFilePath,
            name: a.title,
            state: 'failed',
            errors: errorMessages(a),
            meta: {},
          });
      }
    }
    for (const test of this.tests.slice(first)) this.stream?.test(test, this.rootDir);
  }

  onRunComplete(): void {
    const model = buildReport(this.tests, {
      root: this.rootDir,
      started_at: this.startedAt,
      finished_at: new Date().toISOString(),
      test_name_pattern: this.testNamePattern,
      corpusChoices: [...this.corpusChoices],
    });
    rmSync(this.recordsDir, { recursive: true, force: true });
    this.stream?.end(model);
    // The same terminal summary as under Vitest (report/summary.ts): per track, skip reasons grouped, what runs them.
    const summary = renderTerminalSummary(model, { runner: 'jest' });
    if (summary) process.stderr.write(`\n${summary}\n`);
    process.stderr.write(`${writeContractReport(serialiseReport(model), this.outputFile)}\n`);
    for (const line of writeReportViews(model, { root: this.rootDir, ...this.views }))
      process.stderr.write(`${line}\n`);
  }
}

module.exports = AdcpJestReporter;
module.exports.default = AdcpJestReporter;
