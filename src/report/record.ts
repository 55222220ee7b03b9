/**
 * The step record as it leaves the worker (test meta) and lands in reports:
 * payloads redacted, headers allowlisted, known secrets scrubbed from text.
 */
import type { StepResult, ValidationResult } from '../model/records.js';
import { completeStepResult } from './contract-fields.js';
import {
  filterResponseHeaders,
  REDACTED,
  REDACTED_KEY_PATTERN,
  redactPayload,
  redactRequestHeaders,
  scrubSecretsDeep,
} from '../model/redact.js';

/**
 * A validation whose path ends at a secret-named field (`…/authorization`):
 * its values are the secret itself, with no key around them for redactPayload to see.
 */
function pointsAtSecret(v: ValidationResult): boolean {
  if (typeof v.json_pointer !== 'string' || v.json_pointer === '') return false;
  const last = v.json_pointer
    .slice(v.json_pointer.lastIndexOf('/') + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
  return REDACTED_KEY_PATTERN.test(last);
}

/** Stable id of a step across runs and shards: `storyboard_id/phase_id/step_id`. */
export function stepKey(result: Pick<StepResult, 'storyboard_id' | 'phase_id' | 'step_id'>): string {
  return `${result.storyboard_id}/${result.phase_id}/${result.step_id}`;
}

/**
 * How much of one payload a record keeps, serialised. The step's own request
 * and response keep up to 1 MiB; the copies the contract asks each failed
 * validation to carry keep 64 KiB — 80 failing checks on one 8 MB answer must
 * not make a 640 MB report (or a worker message V8 cannot build).
 */
const MAX_STEP_PAYLOAD_CHARS = 1024 * 1024;
const MAX_VALIDATION_PAYLOAD_CHARS = 64 * 1024;
/** Free text (a transport error, an agent's message) kept in a record. */
const MAX_RECORD_TEXT_CHARS = 16 * 1024;

/** The key of boundPayload's marker. */
const CUT = '[cut]';

/** `value`, or — past `max` characters of JSON — a marker with the size and the start of it. */
function boundPayload(value: unknown, max: number): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return value;
  }
  if (text === undefined || text.length <= max) return value;
  return {
    [CUT]: `${text.length} characters of JSON, more than the ${max} a record keeps`,
    start: text.slice(0, Math.min(4096, max)),
  };
}

/** For a value boundPayload cut, its size in characters of JSON (`'many'` if the marker lost it); else undefined. */
export function cutSize(value: unknown): string | undefined {
  const cut = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[CUT] : undefined;
  return typeof cut === 'string' ? (/^\d+/.exec(cut)?.[0] ?? 'many') : undefined;
}

function boundText(text: string | undefined): string | undefined {
  if (text === undefined || text.length <= MAX_RECORD_TEXT_CHARS) return text;
  return `${text.slice(0, MAX_RECORD_TEXT_CHARS)}… [cut: ${text.length - MAX_RECORD_TEXT_CHARS} more characters]`;
}

/**
 * Redacted and bounded payloads of one record, by the payload they were made
 * from: each failed validation carries the step's own request and response,
 * so without this an 8 MB answer with 80 failing checks is redacted 81 times.
 */
type PayloadCache = Map<unknown, Map<number, unknown>>;

function boundRedacted(payload: unknown, max: number, cache: PayloadCache): unknown {
  if (payload === null || typeof payload !== 'object') return boundPayload(redactPayload(payload), max);
  let byMax = cache.get(payload);
  if (!byMax) cache.set(payload, (byMax = new Map()));
  if (!byMax.has(max)) byMax.set(max, boundPayload(redactPayload(payload), max));
  return byMax.get(max);
}

function redactExchange<T extends { payload: unknown; headers?: Record<string, string> }>(
  record: T | undefined,
  kind: 'request' | 'response',
  cache: PayloadCache,
  max = MAX_STEP_PAYLOAD_CHARS,
): T | undefined {
  if (!record) return undefined;
  return {
    ...record,
    payload: boundRedacted(record.payload, max, cache),
    ...(record.headers
      ? { headers: kind === 'request' ? redactRequestHeaders(record.headers) : filterResponseHeaders(record.headers) }
      : {}),
  };
}

export function redactStepResult(raw: StepResult, secrets: readonly string[] = []): StepResult {
  const cache: PayloadCache = new Map();
  // Contract fields a failed validation must carry, null where there is nothing — before redaction, so the copies are redacted too.
  const result = completeStepResult(raw);
  const validations: ValidationResult[] = result.validations.map((v) => ({
    ...v,
    ...(v.actual !== undefined
      ? { actual: pointsAtSecret(v) ? REDACTED : boundRedacted(v.actual, MAX_VALIDATION_PAYLOAD_CHARS, cache) }
      : {}),
    ...(v.expected !== undefined ? { expected: pointsAtSecret(v) ? REDACTED : redactPayload(v.expected) } : {}),
    request: v.request === null ? null : redactExchange(v.request, 'request', cache, MAX_VALIDATION_PAYLOAD_CHARS),
    response: v.response === null ? null : redactExchange(v.response, 'response', cache, MAX_VALIDATION_PAYLOAD_CHARS),
    ...(v.error !== undefined ? { error: boundText(v.error) } : {}),
  }));
  for (const v of validations) {
    if (v.request === undefined) delete v.request;
    if (v.response === undefined) delete v.response;
  }
  const out: StepResult = {
    ...result,
    validations,
    request: redactExchange(result.request, 'request', cache),
    response: redactExchange(result.response, 'response', cache),
  };
  if (out.error !== undefined) out.error = boundText(out.error);
  if (!out.request) delete out.request;
  if (!out.response) delete out.response;
  // A webhook is a request the agent sent us: body redacted, headers through the allowlist.
  if (result.webhook_deliveries) {
    out.webhook_deliveries = result.webhook_deliveries.map((d) => ({
      ...d,
      headers: filterResponseHeaders(d.headers) ?? {},
      ...(d.body !== undefined ? { body: redactPayload(d.body) } : {}),
    }));
  }
  return scrubSecretsDeep(out, secrets);
}
