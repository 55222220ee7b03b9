/**
 * The counts runner-output contract 2.6.0 adds to the run summary, derived from the run model's steps (never stored
 * beside them, so they cannot disagree): the 2.6.0 serialiser writes them, and the views show them.
 */
import type { SelectionReason, SkipReason, StepResult, ValidationResult } from '../model/records.js';
import type { RunModel } from './model.js';

export interface RunCounters {
  /** validation_result entries with `passed: false` and `severity: advisory`: they fail no step. */
  validations_advisory_failed: number;
  /** validation_result entries graded not applicable with a `note` (a check kind this runner does not implement). */
  validations_not_applicable: number;
  /** steps_skipped by skip reason (sums to steps_skipped). */
  skipped_by_reason: Partial<Record<SkipReason, number>>;
  /** Steps the selection left out before execution. */
  steps_not_selected: number;
  /** not_selected entries by selection reason. */
  not_selected_by_reason: Partial<Record<SelectionReason, number>>;
}

/** A validation that failed but is advisory: reported, counted apart, never failing its step. */
export function isAdvisoryFailure(v: Pick<ValidationResult, 'passed' | 'severity'>): boolean {
  return !v.passed && v.severity === 'advisory';
}

/** A validation this runner did not grade (forward compatibility): passed, with a `note` saying why. */
export function isNotGraded(v: Pick<ValidationResult, 'note'>): boolean {
  return typeof v.note === 'string';
}

/** The steps that ran (not the planned steps a filtered run left unrun, which have no verdict). */
function ranSteps(model: Pick<RunModel, 'storyboards'>): StepResult[] {
  return model.storyboards.flatMap((sb) => sb.steps).filter((s) => !('not_run' in s));
}

function tally<K extends string>(keys: readonly K[]): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const key of keys) out[key] = (out[key] ?? 0) + 1;
  return out;
}

export function runCounters(model: Pick<RunModel, 'storyboards' | 'summary'>): RunCounters {
  const steps = ranSteps(model);
  const validations = steps.flatMap((s) => s.validations);
  const notSelected = model.summary.not_selected ?? [];
  return {
    validations_advisory_failed: validations.filter(isAdvisoryFailure).length,
    validations_not_applicable: validations.filter(isNotGraded).length,
    skipped_by_reason: tally(steps.flatMap((s) => (s.skip ? [s.skip.reason] : []))),
    steps_not_selected: notSelected.reduce((n, item) => n + item.step_count, 0),
    not_selected_by_reason: tally(notSelected.map((item) => item.reason)),
  };
}
