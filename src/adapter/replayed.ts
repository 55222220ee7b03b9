/**
 * Steps a settle ran silently: with `-t` (or a line filter) a test framework runs one step's test, and that test's
 * settle runs the steps before it for their captures and state while their own tests are filtered out. They did call
 * the agent, so the report gives them the verdict they had, not "not run". An adapter asks this, once per step test
 * that runs, for the records of earlier steps no test of its own reported — in a full run there are none.
 */
import type { StoryboardRun } from '../engine/run.js';
import { redactStepResult, stepKey } from '../report/record.js';
import type { AdcpStepMeta, StoryboardInfo } from '../model/step-meta.js';

export class ReplayedSteps {
  private readonly reported = new Set<string>();

  constructor(private readonly info: StoryboardInfo) {}

  /** Call from the test of `phaseId/stepId` after its settle: the records (redacted) of the steps it replayed. */
  take(
    run: Pick<StoryboardRun, 'ranBefore'>,
    phaseId: string,
    stepId: string,
    secrets: readonly string[],
  ): AdcpStepMeta[] {
    this.reported.add(`${phaseId}/${stepId}`);
    const replayed: AdcpStepMeta[] = [];
    for (const outcome of run.ranBefore(phaseId, stepId, (phase, step) => !this.reported.has(`${phase}/${step}`))) {
      this.reported.add(`${outcome.result.phase_id}/${outcome.result.step_id}`);
      const result = redactStepResult(outcome.result, secrets);
      replayed.push({ id: stepKey(result), status: outcome.status, result, storyboard: this.info });
    }
    return replayed;
  }
}
