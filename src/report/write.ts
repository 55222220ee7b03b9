/**
 * Writing the contract report and its views, for every reporter (Vitest's, Jest's): the file (inert JSON, its folder
 * made), the markdown summary (also appended to `$GITHUB_STEP_SUMMARY`) and the HTML report — pure renderings of the
 * same report object (markdown.ts, html.ts) —, and the lines that say where each went.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { ContractReport, RunModel } from './model.js';
import { renderHtmlReport } from './html.js';
import { renderMarkdownSummary } from './markdown.js';
import { stringifyInert } from '../model/redact.js';

/** Where the contract report goes when its reporter names no file (Vitest's and Jest's), relative to the root. */
export const DEFAULT_REPORT_FILE = 'adcp-results.json';

/**
 * Writes `report` as given — the contract JSON: a run model goes through contract.ts `serialiseReport` first — to
 * `file` (absolute) and returns the line to show the user, with the advisory checks that failed beside the failed
 * steps (contract 2.6.0 > validations_advisory_failed: shown adjacent to steps_failed) and the steps the selection
 * left out, when there are any.
 */
export function writeContractReport(report: ContractReport, file: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, stringifyInert(report, 2) + '\n');
  const { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run } = report.summary;
  const { validations_advisory_failed: advisory = 0, steps_not_selected: notSelected = 0 } = report.summary as {
    validations_advisory_failed?: number;
    steps_not_selected?: number;
  };
  const advisoryText = advisory > 0 ? `, ${advisory} advisory check${advisory === 1 ? '' : 's'} failed` : '';
  const notRun = steps_not_run > 0 ? `; ${steps_not_run} not run` : '';
  const left = notSelected > 0 ? `; ${notSelected} not selected` : '';
  return `vitest-adcp: runner output contract report (${total_steps} ${total_steps === 1 ? 'step' : 'steps'}: ${steps_passed} passed, ${steps_failed} failed${advisoryText}, ${steps_skipped} skipped${notRun}${left}) written to ${relative(process.cwd(), file) || file}`;
}

export interface ReportViewOptions {
  /** The project root: relative paths below resolve from it, and the views show paths relative to it. */
  root: string;
  /** Write the markdown summary there. */
  markdownFile?: string;
  /** Append the markdown summary to the file `$GITHUB_STEP_SUMMARY` names, when that is set. @default true */
  jobSummary?: boolean;
  /** Write the self-contained HTML report there. */
  htmlFile?: string;
}

/** Writes the markdown summary and the HTML report the options ask for; returns the lines to show the user. */
export function writeReportViews(report: RunModel, options: ReportViewOptions): string[] {
  const { root, markdownFile, htmlFile, jobSummary = true } = options;
  const lines: string[] = [];
  const shown = (file: string) => relative(process.cwd(), file) || file;
  const write = (path: string, text: string) => {
    const file = resolve(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  const stepSummary = jobSummary ? process.env.GITHUB_STEP_SUMMARY : undefined;
  const summary = markdownFile || stepSummary ? renderMarkdownSummary(report, { root }) : undefined;
  if (markdownFile) lines.push(`vitest-adcp: markdown summary written to ${shown(write(markdownFile, summary!))}`);
  if (stepSummary) {
    try {
      appendFileSync(stepSummary, `${summary!}\n`);
      lines.push(`vitest-adcp: markdown summary appended to the GitHub job summary (${stepSummary})`);
    } catch (error) {
      // The job summary is a courtesy: the reports are written, and the run's verdict is not the summary's.
      lines.push(
        `vitest-adcp: could not append to the GitHub job summary (${stepSummary}): ${(error as Error).message}`,
      );
    }
  }
  if (htmlFile)
    lines.push(`vitest-adcp: HTML report written to ${shown(write(htmlFile, renderHtmlReport(report, { root })))}`);
  return lines;
}
