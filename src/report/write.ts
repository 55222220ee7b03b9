/**
 * Writing the contract report and its views, for every reporter (Vitest's, Jest's): the file (inert JSON, its folder
 * made), the markdown summary (also appended to `$GITHUB_STEP_SUMMARY`) and the HTML report — pure renderings of the
 * same report object (markdown.ts, html.ts) —, and the lines that say where each went.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { ContractReport } from './build.js';
import { renderHtmlReport } from './html.js';
import { renderMarkdownSummary } from './markdown.js';
import { stringifyInert } from '../model/redact.js';

/** Writes `report` to `file` (absolute) and returns the line to show the user. */
export function writeContractReport(report: ContractReport, file: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, stringifyInert(report, 2) + '\n');
  const { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run } = report.summary;
  const notRun = steps_not_run > 0 ? `; ${steps_not_run} not run` : '';
  return `vitest-adcp: runner output contract report (${total_steps} ${total_steps === 1 ? 'step' : 'steps'}: ${steps_passed} passed, ${steps_failed} failed, ${steps_skipped} skipped${notRun}) written to ${relative(process.cwd(), file) || file}`;
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
export function writeReportViews(report: ContractReport, options: ReportViewOptions): string[] {
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
