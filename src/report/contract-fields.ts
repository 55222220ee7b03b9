/**
 * The runner output contract's "present, null where there is nothing" rules,
 * applied to a step record on its way out (task meta, the contract JSON, the
 * ndjson stream), whichever engine path built it:
 *
 * - validation_result > required_on_failure: a failed validation carries
 *   `request`, `response`, `json_pointer`, `expected`, `actual`, `schema_id`
 *   and `schema_url`. A check that never reached the agent (an unresolved
 *   `$context` value, an `any_of` no branch met) has no response: `null`, not
 *   an absent key, so a consumer can tell "nothing" from "forgotten".
 *   The step's own exchange stands in when a check did not attach one.
 * - response > required_fields: `payload` — `null` when the transport saw an
 *   HTTP answer but could not read a body from it (HTML instead of JSON).
 */
import type { ResponseRecord, StepResult, ValidationResult } from '../model/records.js';

const ON_FAILURE = ['json_pointer', 'expected', 'actual', 'schema_id', 'schema_url'] as const;

function withPayload(response: ResponseRecord): ResponseRecord;
function withPayload(response: ResponseRecord | null): ResponseRecord | null;
function withPayload(response: ResponseRecord | null): ResponseRecord | null {
  if (!response || response.payload !== undefined) return response;
  return { ...(response as ResponseRecord), payload: null };
}

function completeValidation(v: ValidationResult, step: StepResult): ValidationResult {
  if (v.passed) return v.response ? { ...v, response: withPayload(v.response) } : v;
  const out: ValidationResult = {
    ...v,
    request: v.request ?? step.request ?? null,
    response: withPayload(v.response ?? step.response ?? null),
  };
  for (const key of ON_FAILURE) if (out[key] === undefined) out[key] = null;
  return out;
}

/** The step record with every contract-required field present (pure; the input is not changed). */
export function completeStepResult(result: StepResult): StepResult {
  const out: StepResult = { ...result, validations: result.validations.map((v) => completeValidation(v, result)) };
  if (result.response) out.response = withPayload(result.response);
  return out;
}
