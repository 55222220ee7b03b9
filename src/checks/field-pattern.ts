import { resolvePath } from '../model/path.js';
import type { Check } from './types.js';

/**
 * `field_pattern` (and `envelope_field_pattern`, over the protocol envelope): the path resolves to a string that the
 * JavaScript regular expression source `pattern` matches (unanchored, as `RegExp.prototype.test`). `expected` is
 * `{ pattern }`; `actual` the value found, null when missing (runner-output-contract.yaml 2.6.0 > validation_result).
 * The loader refuses a missing or invalid pattern (rules/validations.ts), so one that reaches here is a storyboard
 * built in code: a failed validation naming it.
 */
export const fieldPattern: Check = ({ validation, exchange }) =>
  matchesAt(exchange.data, validation.path, validation.pattern, 'response');

export const envelopeFieldPattern: Check = ({ validation, exchange }) =>
  matchesAt(exchange.envelope ?? exchange.data, validation.path, validation.pattern, 'protocol envelope');

/** The pattern compiled, or why it cannot be: one rule for the loader and the check. */
export function compilePattern(pattern: unknown): RegExp | string {
  if (typeof pattern !== 'string' || pattern.length === 0)
    return 'needs a non-empty `pattern` (a JavaScript regular expression source)';
  try {
    return new RegExp(pattern);
  } catch (error) {
    return `has a pattern that is not a valid JavaScript regular expression: ${(error as Error).message}`;
  }
}

function matchesAt(root: unknown, rawPath: unknown, pattern: unknown, where: string): ReturnType<Check> {
  const path = String(rawPath ?? '');
  const found = resolvePath(root, path);
  const expected = { pattern: typeof pattern === 'string' ? pattern : null };
  const regex = compilePattern(pattern);
  if (typeof regex === 'string')
    return { passed: false, json_pointer: found.pointer, expected, actual: null, error: `the check ${regex}` };
  const value = found.found ? found.value : null;
  if (typeof value === 'string' && regex.test(value)) return { passed: true, json_pointer: found.pointer };
  return {
    passed: false,
    json_pointer: found.pointer,
    expected,
    actual: value,
    error:
      value === null
        ? `"${path}" is missing from the ${where}`
        : typeof value === 'string'
          ? `"${path}" does not match the pattern`
          : `"${path}" is ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}, not a string`,
  };
}
