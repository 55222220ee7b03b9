import { resolvePath } from '../model/path.js';
import type { Check } from './types.js';

/**
 * `field_absent` (and `envelope_field_absent`, the same rule over the protocol envelope): the path does not resolve,
 * or resolves to `null` — JSON `null` counts as absent, as it does for `field_present`. On failure `expected` is null
 * and `actual` the value found (runner-output-contract.yaml 2.6.0 > validation_result > expected / actual).
 */
export const fieldAbsent: Check = ({ validation, exchange }) => absentAt(exchange.data, validation.path, 'response');

export const envelopeFieldAbsent: Check = ({ validation, exchange }) =>
  absentAt(exchange.envelope ?? exchange.data, validation.path, 'protocol envelope');

function absentAt(root: unknown, rawPath: unknown, where: string): ReturnType<Check> {
  const path = String(rawPath ?? '');
  const found = resolvePath(root, path);
  if (!found.found || found.value === null) return { passed: true, json_pointer: found.pointer };
  return {
    passed: false,
    json_pointer: found.pointer,
    expected: null,
    actual: found.value,
    error: `"${path}" is present in the ${where}, and must not be`,
  };
}
