import { formatStepFailure } from '../report/format.js';
import { judge, unsupportedReceived } from './answer.js';
import type { MatcherContext, MatcherResult } from './types.js';

/**
 * `expect(stepResult).toPassStoryboardStep()`: a storyboard step's result
 * (`StepResult`, a `StepOutcome` from `StoryboardRun.settle()`, a test's
 * `task.meta.adcp`, a contract report record) passed — it did not fail and was
 * not skipped. The failure message is the one the step's own test prints
 * (report/format.ts): the failed checks, their JSON Pointers, the answer around them.
 */
export function toPassStoryboardStep(this: MatcherContext, received: unknown): MatcherResult | Promise<MatcherResult> {
  return judge(received, undefined, (answer) => {
    const step = answer.step;
    if (!step)
      throw unsupportedReceived(received, 'a storyboard step result (StepResult, a StepOutcome, task.meta.adcp)');
    const pass = !step.skip && step.passed;
    const hint = this.utils.matcherHint('toPassStoryboardStep', 'stepResult', '', {
      isNot: this.isNot,
      promise: this.promise,
    });
    const name = `step "${step.step_id}" (task ${step.task})`;
    return {
      pass,
      message: () => {
        if (pass)
          return `${hint}\n\nExpected ${name} not to pass, but it passed ${this.utils.printReceived(`${step.validations.length} validation${step.validations.length === 1 ? '' : 's'}`)}`;
        if (step.skip)
          return `${hint}\n\nExpected ${name} to pass\nReceived: ${this.utils.printReceived(`skipped (${step.skip.reason})`)}: ${step.skip.detail}`;
        return `${hint}\n\nExpected ${name} to pass\n\n${formatStepFailure(step).message}`;
      },
    };
  });
}
