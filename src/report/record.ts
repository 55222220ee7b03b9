/**
 * The step record as it leaves the worker (test meta) and lands in reports:
 * payloads redacted, headers allowlisted, known secrets scrubbed from text.
 */
import type { StepResult, ValidationResult } from '../engine/records.js';
import { filterResponseHeaders, redactPayload, redactRequestHeaders, scrubSecretsDeep } from './redact.js';

/** Stable id of a step across runs and shards: `storyboard_id/phase_id/step_id`. */
export function stepKey(result: Pick<StepResult, 'storyboard_id' | 'phase_id' | 'step_id'>): string {
  return `${result.storyboard_id}/${result.phase_id}/${result.step_id}`;
}

function redactExchange<T extends { payload: unknown; headers?: Record<string, string> }>(record: T | undefined, kind: 'request' | 'response'): T | undefined {
  if (!record) return undefined;
  return {
    ...record,
    payload: redactPayload(record.payload),
    ...(record.headers ? { headers: kind === 'request' ? redactRequestHeaders(record.headers) : filterResponseHeaders(record.headers) } : {}),
  };
}

export function redactStepResult(result: StepResult, secrets: readonly string[] = []): StepResult {
  const validations: ValidationResult[] = result.validations.map((v) => ({
    ...v,
    ...(v.actual !== undefined ? { actual: redactPayload(v.actual) } : {}),
    ...(v.expected !== undefined ? { expected: redactPayload(v.expected) } : {}),
    request: redactExchange(v.request, 'request'),
    response: redactExchange(v.response, 'response'),
  }));
  for (const v of validations) {
    if (v.request === undefined) delete v.request;
    if (v.response === undefined) delete v.response;
  }
  const out: StepResult = { ...result, validations, request: redactExchange(result.request, 'request'), response: redactExchange(result.response, 'response') };
  if (!out.request) delete out.request;
  if (!out.response) delete out.response;
  return scrubSecretsDeep(out, secrets);
}
