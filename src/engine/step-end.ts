/**
 * How a step's record is finished (run.ts `execute`): timed from the step's start, skipped with the contract's
 * `passed`, carrying the warnings gathered on the way (a skip_if the test kit cannot decide, enrichment, polling).
 */
import type { SkipResult, StepResult } from '../model/records.js';

/** What the record of a step whose call the run's `stop()` aborted says. */
export const CANCELLED_STEP =
  'cancelled: the run was cancelled while this step waited for the agent, so its call was aborted and it has no verdict';

/** The engine's empty record of a step: no verdict yet (`passed: false`), nothing sent. */
export function emptyRecord(
  storyboardId: string,
  entry: { phase: { id: string }; step: { id: string } },
  task: string,
): StepResult {
  return {
    storyboard_id: storyboardId,
    phase_id: entry.phase.id,
    step_id: entry.step.id,
    task,
    passed: false,
    duration_ms: 0,
    validations: [],
    extraction: { path: 'none' },
  };
}

export class StepEnd {
  /** Warnings for the step's record, gathered while it runs. */
  readonly warnings: string[] = [];
  private started = performance.now();

  /** `base`: the engine's empty record for the step. */
  constructor(readonly base: StepResult) {}

  /** The record, timed; without the warnings (a configuration error's record says that alone). */
  timed(record: StepResult): StepResult {
    return { ...record, duration_ms: Math.round(performance.now() - this.started) };
  }

  /** The record, timed, with the step's warnings after its own. */
  done(record: StepResult): StepResult {
    const timed = this.timed(record);
    if (this.warnings.length === 0) return timed;
    return { ...timed, warnings: [...(timed.warnings ?? []), ...this.warnings] };
  }

  /** A prerequisite_failed skip is the one whose state is lost: `passed: false`, whatever skipped it. */
  skipped(skip: SkipResult, extra: Partial<StepResult> = {}): StepResult {
    return this.done({ ...this.base, passed: skip.reason !== 'prerequisite_failed', skip, ...extra });
  }

  /** A step the run's `stop()` cut short: what went out, kept; no verdict, no validations (the agent is not at fault). */
  cancelled(result: StepResult): StepResult {
    const { request, task } = result;
    return this.done({ ...this.base, task, ...(request ? { request } : {}), error: CANCELLED_STEP, cancelled: true });
  }

  /** The step's clock starts once `wait` (its turn at the agent: run-settings.ts StepTurns) is over. */
  async startAfter(wait: Promise<void> | undefined): Promise<void> {
    if (!wait) return;
    await wait;
    this.started = performance.now();
  }

  /** What is left of a bound that started with the step. */
  remainingMs(boundMs: number): number {
    return Math.max(0, boundMs - (performance.now() - this.started));
  }
}
