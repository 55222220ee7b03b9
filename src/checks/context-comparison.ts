import { resolvePath } from '../model/path.js';
import { jsonEqual } from './equality.js';
import type { Check, CheckInput, CheckVerdict } from './types.js';

/**
 * The cross-step comparisons (storyboard-schema.yaml > Cross-step comparison): a field of this step's answer against
 * a value a prior step captured (`context_key`, read from the run's context as it was before this step), or — for the
 * numeric kinds — a literal `value`. `expected` carries the resolved runtime comparand, never the key
 * (runner-output-contract.yaml 2.6.0 > notes.cross_step_comparison_checks, rule 1). A `context_key` the context does
 * not hold (the capturing step was skipped on another branch) passes with a `context_key_absent` observation (rule 2):
 * a capture that failed is graded on the step that captured it.
 */
type Comparand = { value: unknown } | { absent: string };

function comparand({ validation, context }: CheckInput): Comparand {
  const key = validation.context_key;
  if (typeof key !== 'string') return { value: validation.value };
  if (!context?.has(key) || context.get(key) === undefined)
    return {
      absent: `context_key_absent: "${key}" is not in the run's context (the step that captures it was skipped or did not run)`,
    };
  return { value: context.get(key) };
}

/** `field_less_than`: both operands finite numbers, the field strictly below the comparand. */
export const fieldLessThan: Check = (input) => numeric(input, '<', (a, b) => a < b);

function numeric(input: CheckInput, symbol: string, holds: (actual: number, bound: number) => boolean): CheckVerdict {
  const path = String(input.validation.path ?? '');
  const bound = comparand(input);
  if ('absent' in bound) return { passed: true, json_pointer: null, observations: [bound.absent] };
  const found = resolvePath(input.exchange.data, path);
  const actual = found.found ? found.value : null;
  const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  const fail = (error: string): CheckVerdict => ({
    passed: false,
    json_pointer: found.pointer,
    expected: bound.value ?? null,
    actual,
    error,
  });
  if (!finite(bound.value))
    return fail(`the comparand ${JSON.stringify(bound.value) ?? 'undefined'} is not a finite number`);
  if (actual === null) return fail(`"${path}" is missing from the response`);
  if (!finite(actual)) return fail(`"${path}" is not a finite number`);
  if (holds(actual, bound.value)) return { passed: true, json_pointer: found.pointer };
  return fail(`"${path}" is ${actual}, not ${symbol} ${bound.value}`);
}

/** `field_equals_context`: the field deep-equals the captured value (`field_value`'s equality). */
export const fieldEqualsContext: Check = (input) => {
  const path = String(input.validation.path ?? '');
  const bound = comparand({ ...input, validation: { ...input.validation, value: undefined } });
  if ('absent' in bound) return { passed: true, json_pointer: null, observations: [bound.absent] };
  const found = resolvePath(input.exchange.data, path);
  if (found.found && jsonEqual(found.value, bound.value)) return { passed: true, json_pointer: found.pointer };
  return {
    passed: false,
    json_pointer: found.pointer,
    expected: bound.value,
    actual: found.found ? found.value : null,
    error: found.found
      ? `"${path}" differs from the value captured as "${input.validation.context_key}"`
      : `"${path}" is missing from the response`,
  };
};
