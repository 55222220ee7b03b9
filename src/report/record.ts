/**
 * The step record as it leaves the worker (test meta) and lands in reports:
 * payloads redacted, headers allowlisted, known secrets scrubbed from text.
 */
import type { StepResult, ValidationResult } from '../engine/records.js';
import { filterResponseHeaders, REDACTED, REDACTED_KEY_PATTERN, redactPayload, redactRequestHeaders, scrubSecretsDeep } from './redact.js';

/**
 * A validation whose path ends at a secret-named field (`…/authorization`):
 * its values are the secret itself, with no key around them for redactPayload to see.
 */
function pointsAtSecret(v: ValidationResult): boolean {
  if (typeof v.json_pointer !== 'string' || v.json_pointer === '') return false;
  const last = v.json_pointer.slice(v.json_pointer.lastIndexOf('/') + 1).replace(/~1/g, '/').replace(/~0/g, '~');
  return REDACTED_KEY_PATTERN.test(last);
}

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
    ...(v.actual !== undefined ? { actual: pointsAtSecret(v) ? REDACTED : redactPayload(v.actual) } : {}),
    ...(v.expected !== undefined ? { expected: pointsAtSecret(v) ? REDACTED : redactPayload(v.expected) } : {}),
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
  // A webhook is a request the agent sent us: body redacted, headers through the allowlist.
  if (result.webhook_deliveries) {
    out.webhook_deliveries = result.webhook_deliveries.map((d) => ({ ...d, headers: filterResponseHeaders(d.headers) ?? {}, ...(d.body !== undefined ? { body: redactPayload(d.body) } : {}) }));
  }
  return scrubSecretsDeep(out, secrets);
}
