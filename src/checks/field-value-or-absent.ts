import { resolvePath } from '../model/path.js';
import { jsonEqual, oneOf } from './equality.js';
import type { Check } from './types.js';

/**
 * `field_value_or_absent`: passes when the field is absent, or present with the
 * expected value / one of `allowed_values`; fails only on a present, wrong value
 * (storyboard-schema.yaml > "field_value_or_absent check"). The loader already
 * rejects the check without `value` or `allowed_values`.
 */
export const fieldValueOrAbsent: Check = ({ validation, exchange }) => {
  const path = String(validation.path ?? '');
  const found = resolvePath(exchange.data, path);
  const allowed = Array.isArray(validation.allowed_values) ? validation.allowed_values : undefined;
  const hasValue = Object.prototype.hasOwnProperty.call(validation, 'value');
  if (!found.found) return { passed: true, json_pointer: found.pointer };
  const passed =
    (allowed !== undefined && oneOf(found.value, allowed)) || (hasValue && jsonEqual(found.value, validation.value));
  if (passed) return { passed, json_pointer: found.pointer };
  return {
    passed,
    json_pointer: found.pointer,
    expected: allowed ?? validation.value,
    actual: found.value,
    error: `"${path}" is present with a value that is not allowed (it may be omitted, but must not be wrong)`,
  };
};
