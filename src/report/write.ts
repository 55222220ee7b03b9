/**
 * Writing the contract report, for every reporter (Vitest's, Jest's): the file (inert JSON, its folder made), and the
 * one line that says where it went and what it holds.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { ContractReport } from './build.js';
import { stringifyInert } from './redact.js';

/** Writes `report` to `file` (absolute) and returns the line to show the user. */
export function writeContractReport(report: ContractReport, file: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, stringifyInert(report, 2) + '\n');
  const { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run } = report.summary;
  const notRun = steps_not_run > 0 ? `; ${steps_not_run} not run` : '';
  return `vitest-adcp: runner output contract report (${total_steps} steps: ${steps_passed} passed, ${steps_failed} failed, ${steps_skipped} skipped${notRun}) written to ${relative(process.cwd(), file) || file}`;
}
