import { resolvePath } from '../model/path.js';
import { jsonEqual, oneOf } from './equality.js';
import type { Check } from './types.js';

/** `field_value`: the field equals `value`, or is one of `allowed_values`. */
export const fieldValue: Check = ({ validation, exchange }) => {
  const path = String(validation.path ?? '');
  const found = resolvePath(exchange.data, path);
  const allowed = Array.isArray(validation.allowed_values) ? validation.allowed_values : undefined;
  const expected = allowed ?? validation.value;
  const passed = found.found && (allowed ? oneOf(found.value, allowed) : jsonEqual(found.value, validation.value));
  if (passed) return { passed, json_pointer: found.pointer };
  return {
    passed,
    json_pointer: found.pointer,
    expected,
    actual: found.found ? found.value : null,
    error: found.found
      ? `"${path}" ${allowed ? 'is not one of the allowed values' : 'does not have the expected value'}`
      : `"${path}" is missing from the response`,
  };
};
