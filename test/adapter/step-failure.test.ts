import { describe, expect, it } from 'vitest';
import { stepFailureText } from '../../src/adapter/step-failure.js';
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
