/**
 * What a test-framework adapter reports for a step, whatever the framework: the failure error (one-line headline,
 * details, a stack whose first frame is the failing validation's YAML line), the skip text, the retry refusal, the
 * load-failure text. No test framework import: both adapters (src/vitest/suite.ts, src/jest/suite.ts) build on it.
 */
import { failsStep, type StepOutcome } from '../model/records.js';
import { failureHeadline, formatStepFailure } from '../report/format.js';
import { redactStepResult } from '../report/record.js';
import { sanitizeOutput } from '../model/redact.js';
import { withoutToolList } from '../report/summary.js';
import type { Diagnostic, Storyboard } from '../model/storyboard.js';

type StepResult = StepOutcome['result'];

/** A validation with its YAML position: the failure's first stack frame. */
export interface FailingValidation {
  check: string;
  source?: { file: string; line: number; column: number };
}

/** Frames of the adapters and of the installed package: a failure's stack starts at the user's YAML, not in us. */
const OWN_FRAME = /node_modules\/vitest-adcp\/|\/(?:src|dist)\/(?:vitest|jest|adapter)\/|\/vitest\/suite\./;

/**
 * Frames of the test framework that called the step (its runner, Node's promise machinery): never the user's code,
 * and both frameworks hide them. Left out here because Vitest's main process looks each frame's file up for a source
 * map before it drops its own frames — reading and scanning a runner chunk of its, for every frame of every failed
 * step (~90 ms of a 3.1 corpus run's main process). A corpus storyboard's own frame is under node_modules too, but a
 * `.yaml` file, not a script.
 */
const FRAMEWORK_FRAME =
  /\/node_modules\/(?:vitest|@vitest\/[\w-]+|jest-[\w-]+|@jest\/[\w-]+)\/.*\.[cm]?js:\d+:\d+\)?$|\(node:internal\/|^\s+at node:internal\/|\(<anonymous>\)$/;

/**
 * The stack of a step error: `Name: message`, then the failing validation's YAML position (when there is one), then
 * the frames of `at` — an Error captured while the compiled module's `it` callback was on the stack, whose source map
 * puts it on the step's YAML line — without the adapter's own frames and the framework's.
 */
export function stepErrorStack(name: string, message: string, at: Error, validation?: FailingValidation): string {
  const frames = (at.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line) && !OWN_FRAME.test(line) && !FRAMEWORK_FRAME.test(line));
  const source = validation?.source;
  if (source) frames.unshift(`    at ${validation!.check} (${source.file}:${source.line}:${source.column})`);
  return `${name}: ${message}\n${frames.join('\n')}`;
}

/**
 * A failed step as text: `headline` is one line (JUnit's `message=`, a CI annotation's title), `details` the failed
 * checks, what was sent and received (or, ADCP_VERBOSE=1, the whole request and response), `expected`/`actual` for a
 * framework's own diff, `validation` the first failed check with a YAML position.
 */
export interface StepFailureText {
  headline: string;
  details: string;
  expected?: unknown;
  actual?: unknown;
  validation?: FailingValidation;
}

/** `result` must already be redacted (redactStepResult). */
export function stepFailureText(
  result: StepResult,
  secrets: readonly string[],
  verbose = process.env.ADCP_VERBOSE === '1',
): StepFailureText {
  const formatted = formatStepFailure(result, { secrets, verbose });
  const details = formatted.message.slice(formatted.headline.length).replace(/^\n/, '');
  // The check that fails the step (an advisory one fails none), else the first that failed at all.
  const validation = (result.validations.find((v) => failsStep(v) && v.source) ??
    result.validations.find((v) => !v.passed && v.source)) as FailingValidation | undefined;
  return {
    headline: formatted.headline,
    details,
    ...(formatted.expected !== undefined ? { expected: formatted.expected, actual: formatted.actual } : {}),
    ...(validation ? { validation } : {}),
  };
}

/**
 * Why a retried step is not run again, naming the first attempt's verdict: a storyboard is a stateful sequence, so a
 * second call would be graded against state its own first attempt may have changed.
 */
export function retryRefusal(
  outcome: StepOutcome,
  secrets: readonly string[],
  retry: number,
  retryOption = '--retry / retry',
): string {
  const first =
    outcome.status === 'failed'
      ? failureHeadline(redactStepResult(outcome.result, secrets), { secrets })
      : outcome.status;
  return `vitest-adcp does not retry storyboard steps (retry ${retry}): a storyboard is a stateful sequence, so the first attempt's verdict stands — ${first}. To try a flaky agent again, run the storyboard again; keep ${retryOption} for your own tests.`;
}

/**
 * The contract's skip reason and detail, as one terminal-safe line (the detail can quote agent-supplied names). The
 * agent's whole tool list, which a missing_tool detail cites (the record keeps it), is left to the run's summary
 * (report/summary.ts), which prints it once: per step, only the tool that is missing.
 */
export function skipText(result: StepResult): string {
  return sanitizeOutput(`${result.skip!.reason}: ${withoutToolList(result.skip!.detail)}`);
}

/** runner-output-contract.yaml > skip_result.reasons.no_phases: the detail cites id and version. */
export function noPhasesSkip(storyboard: Pick<Storyboard, 'id' | 'version'>): { reason: 'no_phases'; detail: string } {
  return {
    reason: 'no_phases',
    detail: `storyboard ${storyboard.id}${storyboard.version ? ` version ${storyboard.version}` : ''} has no phases to run`,
  };
}

/** A storyboard file that failed to load: the first error as the headline, every error with its fix below it. */
export function loadFailureText(diagnostics: readonly Diagnostic[]): { headline: string; details: string } {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const render = (d: Diagnostic) =>
    `${d.file}:${d.line}:${d.column}: [${d.rule}] ${d.message}${d.hint ? `\n    fix: ${d.hint}` : ''}`;
  const first = errors[0];
  const headline = `storyboard does not load${first ? `: ${first.file}:${first.line}:${first.column}: [${first.rule}] ${first.message.split('\n')[0]}` : ''}${errors.length > 1 ? ` (+${errors.length - 1} more)` : ''}`;
  return { headline, details: errors.map(render).join('\n') };
}
