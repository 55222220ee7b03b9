/**
 * The contract report as a stream: one JSON line per finished test, written
 * (and flushed to the file system) as the test ends, so a run that is killed
 * — a CI timeout, an OOM, Ctrl-C — leaves what it had. Each line is built by
 * the same `buildReport` as the JSON, so it is redacted the same way.
 *
 *   {"type":"run_start",…}                 contract, tool, start, filter
 *   {"type":"step",…,"step":{…}}          a step record (passed, failed, skipped, or not_run)
 *   {"type":"storyboard_skip",…}          a storyboard skipped as a whole (no_phases; not applicable up front, first)
 *   {"type":"load_error",…}               a storyboard file that did not load
 *   {"type":"run_end",…,"summary":{…}}     the run envelope and summary; absent when the run was killed
 *
 * `run_start` names the contract the run is expected to follow (contract.ts `expectedContract`: the corpus the run was
 * given); the run's records decide it (build.ts), and `run_end`'s summary is the contract's run summary in that
 * version. A 1.1.0 stream's lines are what they always were; from 2.6.0 on — or when the records decided otherwise than
 * `run_start` said — `run_end` names its contract too.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ContractVersion } from '../model/contract-rules.js';
import { buildReport, type ReportTest, type RunModel } from './build.js';
import { CONTRACT_ID, expectedContract, serialiseReport } from './contract.js';
import { toolVersion } from './envelope.js';
import { stringifyInert } from '../model/redact.js';

export type NdjsonLine = Record<string, unknown> & {
  type: 'run_start' | 'step' | 'storyboard_skip' | 'load_error' | 'run_end';
};

/** The lines one finished test contributes (none for a test that is not a storyboard's). */
function linesForTest(test: ReportTest, root: string): NdjsonLine[] {
  const report = buildReport([test], { root });
  const lines: NdjsonLine[] = report.load_errors.map((e) => ({ type: 'load_error', ...e }));
  for (const s of report.storyboards) {
    const where = {
      project: s.project,
      agent_url: s.agent_url,
      protocol: s.protocol,
      storyboard_id: s.storyboard_id,
      title: s.title,
      file: s.file,
      ...(s.track ? { track: s.track } : {}),
    };
    if (s.skip) lines.push({ type: 'storyboard_skip', ...where, skip: s.skip });
    for (const step of s.steps) lines.push({ type: 'step', ...where, step });
  }
  return lines;
}

/** Where the stream goes by default: beside the JSON report, `.ndjson` for `.json`. */
export function ndjsonBeside(jsonFile: string): string {
  return jsonFile.replace(/(\.json)?$/i, '.ndjson');
}

export class NdjsonStream {
  private started = false;
  /** The contract run_start named. */
  private announced: ContractVersion | undefined;

  constructor(readonly file: string) {}

  /**
   * Starts the file afresh (a previous run's lines must not mix with this one's). `contract`: the one the run is
   * expected to follow; by default that of the corpus a run takes when none is named (contract.ts `expectedContract`).
   */
  start(startedAt: string, testNamePattern: string | null, contract?: ContractVersion): void {
    this.started = true;
    this.announced = contract ?? expectedContract(process.cwd());
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, '');
    this.write({
      type: 'run_start',
      contract: { id: CONTRACT_ID, version: this.announced },
      runner: { name: 'vitest-adcp', version: toolVersion() },
      started_at: startedAt,
      test_name_pattern: testNamePattern,
    });
  }

  test(test: ReportTest, root: string): void {
    // A merge of blob reports may replay results without a run start.
    if (!this.started) this.start(new Date().toISOString(), null);
    for (const line of linesForTest(test, root)) this.write(line);
  }

  end(model: RunModel): void {
    if (!this.started) this.start(model.run.started_at, model.run.test_name_pattern, model.contract.version);
    const report = serialiseReport(model);
    const named = report.contract.version !== '1.1.0' || report.contract.version !== this.announced;
    this.write({
      type: 'run_end',
      ...(named ? { contract: report.contract } : {}),
      run: report.run,
      summary: report.summary,
    });
  }

  private write(line: NdjsonLine): void {
    // Synchronous on purpose: each line is on disk before the next test's result arrives, so a kill loses at most the test in flight.
    appendFileSync(this.file, stringifyInert(line) + '\n');
  }
}
