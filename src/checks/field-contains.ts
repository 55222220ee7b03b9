import { resolvePath } from '../model/path.js';
import { jsonEqual } from './equality.js';
import type { Check } from './types.js';

/**
 * `field_contains`: wildcard-aware membership (storyboard-schema.yaml > Validation). `path` may hold `[*]` (or `[]`)
 * segments; the check passes when any value it resolves to matches `value`, or one of `allowed_values`. A scalar
 * expectation matches by equality; an object or array expectation is a deep subset — an object's listed keys match,
 * the answer may carry more; each listed array item matches a distinct item, in any order — so a storyboard can name
 * the keyed parts of an unordered entry. On failure `actual` is every value resolved (runner-output-contract.yaml
 * 2.6.0 > validation_result), empty when the path reached nothing.
 */
export const fieldContains: Check = ({ validation, exchange }) => {
  const path = String(validation.path ?? '');
  const found = resolvePath(exchange.data, path);
  const resolved = !found.found ? [] : found.matches ? found.matches.map((m) => m.value) : [found.value];
  const allowed = Array.isArray(validation.allowed_values) && validation.allowed_values.length > 0;
  const candidates = allowed ? validation.allowed_values! : [validation.value];
  const hit = (found.matches ?? (found.found ? [{ value: found.value, pointer: found.pointer }] : [])).find((m) =>
    candidates.some((candidate) => containsMatch(m.value, candidate)),
  );
  if (hit) return { passed: true, json_pointer: hit.pointer };
  return {
    passed: false,
    json_pointer: found.pointer,
    expected: allowed ? validation.allowed_values : validation.value,
    actual: resolved,
    error:
      resolved.length === 0
        ? `"${path}" resolves to nothing in the response`
        : `no value at "${path}" ${allowed ? 'matches any of the allowed values' : 'contains the expected value'}`,
  };
};

/** Deep-subset match: what `field_contains` means by "contains". Bounded by the depth of the expectation. */
function containsMatch(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return false;
    if (expected.length === 0) return actual.length === 0;
    const used = new Set<number>();
    return expected.every((item) => {
      const at = actual.findIndex((candidate, i) => !used.has(i) && containsMatch(candidate, item));
      if (at === -1) return false;
      used.add(at);
      return true;
    });
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(expected).every(
      ([key, value]) => Object.hasOwn(actual, key) && containsMatch((actual as Record<string, unknown>)[key], value),
    );
  }
  return jsonEqual(actual, expected);
}
