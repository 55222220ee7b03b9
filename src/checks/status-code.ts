import type { Check } from './types.js';

/**
 * `status_code`: the HTTP status of the agent's answer is `value` (or one of
 * `allowed_values`). The contract's `expected` is the expected status.
 */
export const statusCode: Check = ({ validation, exchange }) => {
  const allowed = Array.isArray(validation.allowed_values)
    ? validation.allowed_values.map(Number)
    : [Number(validation.value)];
  const expected = Array.isArray(validation.allowed_values) ? validation.allowed_values : validation.value;
  const status = exchange.response?.status;
  if (status === undefined) {
    return {
      passed: false,
      json_pointer: null,
      expected,
      actual: null,
      error: 'no HTTP status was observed for this call',
    };
  }
  const passed = allowed.includes(status);
  return passed
    ? { passed, json_pointer: null }
    : { passed, json_pointer: null, expected, actual: status, error: `HTTP status ${status} is not the one expected` };
};
