/**
 * What the webhook tasks read of the receiver's deliveries (webhooks.ts): their bodies and keys, filters, the
 * validations a step records, and the bounded delivery records.
 */
import { jsonEqual } from '../../checks/equality.js';
import type { WebhookSignatureErrorCode } from '../../signing/index.js';
import type { Step } from '../../model/storyboard.js';
import type { WebhookDelivery } from '../../webhooks/receiver.js';
import type { SkipResult, StepResult, ValidationResult, WebhookDeliveryRecord } from '../../model/records.js';
import { resolvePath } from '../../model/path.js';

/** mcp-webhook-payload.json > idempotency_key. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_.:-]{16,255}$/;
const MAX_RECORDED_DELIVERIES = 50;
const MAX_RECORDED_BODY_CHARS = 64 * 1024;

/** A signature's verdict on one delivery; `operatorJwks`: the location of the operator's JWKS its keys came from. */
export type Verdict = (
  | { ok: true; keyid: string }
  | { ok: false; code: WebhookSignatureErrorCode | 'webhook_body_malformed'; step: number | string; detail: string }
) & { operatorJwks?: string };

/** The step warning of a signature graded with the operator's keys: the verdict is not one under the spec's discovery. */
export function operatorJwksWarning(location: string): string {
  return `webhook signatures were verified against the operator-supplied JWKS ${location} (webhooks.signerJwks), not keys found by the spec's brand.json discovery: a pass here is not a pass under AdCP key discovery; publish the key at your brand.json agents[].jwks_uri before deploying`;
}

/** A webhook step cannot observe what its trigger never caused. */
export function triggerProblem(trigger: StepResult): SkipResult | undefined {
  const skip = trigger.skip;
  // A trigger that does not apply (an operation the agent lacks, no receiver URL) makes the assertion not apply either.
  if (
    skip &&
    ['not_applicable', 'missing_tool', 'missing_test_controller', 'unsatisfied_contract'].includes(skip.reason)
  ) {
    return {
      reason: skip.reason,
      detail: `the webhook this step waits for is triggered by step "${trigger.step_id}", which was skipped (${skip.reason}): ${skip.detail}`,
    };
  }
  if (skip || !trigger.passed) {
    return {
      reason: 'prerequisite_failed',
      detail: `prerequisite step "${trigger.step_id}" (phase ${trigger.phase_id}) ${skip ? `was skipped (${skip.reason})` : 'failed'}, so the webhook it triggers cannot be graded`,
    };
  }
  return undefined;
}

export function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

export function parseBody(
  d: WebhookDelivery,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  if (d.oversize) return { ok: false, problem: `the body exceeded the receiver's size limit (answered 413)` };
  let value: unknown;
  try {
    value = JSON.parse(d.body.toString('utf8'));
  } catch (error) {
    return { ok: false, problem: `the body is not JSON: ${(error as Error).message}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, problem: 'the body is JSON but not an object' };
  return { ok: true, value: value as Record<string, unknown> };
}

export function keyOf(d: WebhookDelivery): unknown {
  const body = parseBody(d);
  return body.ok ? body.value.idempotency_key : undefined;
}

/** `filter` fields other than operation_id: dotted paths into the payload, compared as JSON. */
export function matchesFilter(d: WebhookDelivery, filter: Record<string, unknown>): boolean {
  const entries = Object.entries(filter);
  if (entries.length === 0) return true;
  const body = parseBody(d);
  if (!body.ok) return false;
  return entries.every(([path, expected]) => {
    let found;
    try {
      found = resolvePath(body.value, path);
    } catch {
      return false;
    }
    return found.found && jsonEqual(found.value, expected);
  });
}

export function idempotencyKeyValidation(v: Validations, body: Record<string, unknown>): ValidationResult {
  const key = body.idempotency_key;
  const description = 'the payload carries an idempotency_key matching ^[A-Za-z0-9_.:-]{16,255}$';
  if (typeof key !== 'string' || key === '') {
    return v.fail(
      'missing_idempotency_key',
      description,
      'the webhook payload has no idempotency_key (receivers dedupe on it: adcp#2417)',
      { json_pointer: '/idempotency_key', expected: 'a non-empty string', observed: key ?? null },
    );
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    return v.fail(
      'invalid_idempotency_key_format',
      description,
      `the idempotency_key does not match ${IDEMPOTENCY_KEY_PATTERN.source}`,
      { json_pointer: '/idempotency_key', expected: IDEMPOTENCY_KEY_PATTERN.source, observed: key },
    );
  }
  return v.pass(description);
}

export function signatureValidation(
  v: Validations,
  verdict: Verdict,
  delivery: WebhookDelivery,
  tag: string,
): ValidationResult {
  const description = `the webhook's RFC 9421 signature verifies under ${tag}`;
  const validation = verdict.ok
    ? v.pass(`${description} (keyid ${verdict.keyid})`)
    : signatureFailure(v, verdict, delivery, tag, description);
  return verdict.operatorJwks === undefined ? validation : withOperatorKeySource(validation, verdict.operatorJwks);
}

/** Marks a signature check graded with the operator's keys, in a field and in words. */
export function withOperatorKeySource(validation: ValidationResult, location: string): ValidationResult {
  return {
    ...validation,
    key_source: 'operator_jwks',
    observations: [
      ...(validation.observations ?? []),
      `key source: the operator-supplied JWKS ${location} (webhooks.signerJwks), not the spec's brand.json discovery`,
    ],
  };
}

function signatureFailure(
  v: Validations,
  verdict: Extract<Verdict, { ok: false }>,
  delivery: WebhookDelivery,
  tag: string,
  description: string,
): ValidationResult {
  return v.fail(
    verdict.code,
    description,
    `${verdict.code} at verifier checklist step ${verdict.step}: ${verdict.detail}`,
    {
      expected: `a signature that passes the webhook verifier checklist (${tag})`,
      observed: {
        signature_input: headerValue(delivery, 'signature-input') ?? null,
        content_digest: headerValue(delivery, 'content-digest') ?? null,
      },
    },
  );
}

function headerValue(d: WebhookDelivery, name: string): string | undefined {
  const lines = d.headers.filter(([n]) => n === name).map(([, value]) => value);
  return lines.length > 0 ? lines.join(', ') : undefined;
}

export function recordDeliveries(
  deliveries: WebhookDelivery[],
  matches: (d: WebhookDelivery) => boolean,
): WebhookDeliveryRecord[] {
  return deliveries.slice(0, MAX_RECORDED_DELIVERIES).map((d) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of d.headers)
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    const text = d.body.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text.length > MAX_RECORDED_BODY_CHARS ? `${text.slice(0, MAX_RECORDED_BODY_CHARS)}…` : text;
    }
    return {
      url: d.url,
      received_at: new Date(d.receivedAt).toISOString(),
      method: d.method,
      answered_status: d.answered,
      headers,
      ...(d.oversize ? { oversize: true } : { body }),
      body_bytes: d.body.length,
      matched: matches(d),
    };
  });
}

/** Validation records of a webhook step, placed at the step's YAML line. */
export class Validations {
  constructor(
    private readonly file: string,
    private readonly step: Step,
    private readonly task: string,
  ) {}

  private source() {
    return { file: this.file, line: this.step.loc.line, column: this.step.loc.column };
  }

  pass(description: string): ValidationResult {
    return { check: this.task, passed: true, description, schema_id: null, schema_url: null, source: this.source() };
  }

  /** A failure named by the spec's error code (`actual.code`). */
  fail(
    code: string,
    description: string,
    error: string,
    fields: { json_pointer?: string | null; expected?: unknown; observed?: unknown } = {},
  ): ValidationResult {
    return {
      check: code === 'unresolved_substitution' ? code : this.task,
      passed: false,
      description,
      json_pointer: fields.json_pointer ?? null,
      expected: fields.expected ?? null,
      actual: { code, ...(fields.observed !== undefined ? { observed: fields.observed } : {}) },
      schema_id: null,
      schema_url: null,
      error: `${code}: ${error}`,
      source: this.source(),
    };
  }
}
