import { describe, expect, it } from 'vitest';
import { stepErrorStack, stepFailureText } from '../../src/adapter/step-failure.js';
import type { StepResult, ValidationResult } from '../../src/model/records.js';

const at = (line: number) => ({ file: 'x.storyboard.yaml', line, column: 9 });
const check = (over: Partial<ValidationResult>): ValidationResult =>
  ({ check: 'field_present', description: 'd', passed: false, json_pointer: '/a', ...over }) as ValidationResult;
const step = (validations: ValidationResult[]): StepResult =>
  ({ storyboard_id: 's', phase_id: 'p', step_id: 'x', passed: false, validations }) as unknown as StepResult;

describe('stepFailureText: the check a failure points at', () => {
  it('is the first check that fails the step, not an advisory one before it (AdCP 3.1 severity: advisory)', () => {
    const text = stepFailureText(
      step([check({ severity: 'advisory', source: at(10) }), check({ check: 'field_value', source: at(20) })]),
      [],
    );
    expect(text.validation?.source).toEqual(at(20));
  });

  it('an advisory check is pointed at only when nothing else failed', () => {
    expect(stepFailureText(step([check({ severity: 'advisory', source: at(10) })]), []).validation?.source).toEqual(
      at(10),
    );
  });
});

describe('stepErrorStack: the frames a step failure carries', () => {
  const captured = (frames: string[]) => Object.assign(new Error(), { stack: ['Error', ...frames].join('\n') });
  const corpusYaml = '/repo/node_modules/@adcp/sdk/compliance/cache/3.1.15/universal/idempotency.yaml';

  it("keeps the storyboard's YAML line (a corpus file under node_modules too) and user code; drops ours and the framework's", () => {
    const stack = stepErrorStack(
      'StoryboardStepError',
      'failed',
      captured([
        '    at step (file:///repo/node_modules/vitest-adcp/dist/vitest/suite.js:120:18)',
        `    at ${corpusYaml}:42:7`,
        '    at helper (/repo/test/helpers.ts:3:1)',
        '    at file:///repo/node_modules/@vitest/runner/dist/chunk-hooks.js:155:11',
        '    at new Promise (<anonymous>)',
        '    at runWithTimeout (file:///repo/node_modules/@vitest/runner/dist/chunk-hooks.js:131:7)',
        '    at callAsyncCircusTest (/repo/node_modules/jest-circus/build/utils.js:298:10)',
        '    at processTicksAndRejections (node:internal/process/task_queues:95:5)',
        '    at node:internal/process/task_queues:140:5',
      ]),
      { check: 'field_present', source: { file: corpusYaml, line: 50, column: 13 } },
    );
    expect(stack.split('\n')).toEqual([
      'StoryboardStepError: failed',
      `    at field_present (${corpusYaml}:50:13)`,
      `    at ${corpusYaml}:42:7`,
      '    at helper (/repo/test/helpers.ts:3:1)',
    ]);
  });
});
