import { ERROR_CODE_LOCATIONS, findErrorCode } from '../model/answer-error.js';
import type { Check } from './types.js';

// The code locator lives beside the rule that says whether an answer is an error (answer-error.ts), which reads its code from it.
export { findErrorCode } from '../model/answer-error.js';

/** `error_code`: the agent answered with an AdCP error whose code is `value` or one of `allowed_values`. */
export const errorCode: Check = ({ validation, exchange }) => {
  const allowed = Array.isArray(validation.allowed_values)
    ? validation.allowed_values.map(String)
    : validation.value !== undefined
      ? [String(validation.value)]
      : undefined;
  const expected = Array.isArray(validation.allowed_values) ? validation.allowed_values : validation.value;
  const found = findErrorCode(exchange);
  if (!found) {
    return {
      passed: false,
      json_pointer: null,
      expected: expected ?? 'an AdCP error code',
      actual: null,
      error: `the agent did not return an AdCP error (looked for ${ERROR_CODE_LOCATIONS})`,
    };
  }
  const passed = allowed === undefined || allowed.includes(found.code);
  return passed
    ? { passed, json_pointer: found.pointer }
    : {
        passed,
        json_pointer: found.pointer,
        expected,
        actual: found.code,
        error: `error code "${found.code}" (at ${found.location}) is not the one expected`,
      };
};
