/**
 * The validations of an `expect_webhook` step on the first matching delivery (webhooks.ts collects them): a JSON
 * object body, its idempotency_key, `webhook_payload_schema_ref`, `expect_max_deliveries_per_logical_event`.
 */
import type { ValidationResult } from '../../model/records.js';
import type { Step } from '../../model/storyboard.js';
import type { SchemaRegistry } from '../../schemas/registry.js';
import type { WebhookDelivery } from '../../webhooks/receiver.js';
import { idempotencyKeyValidation, keyOf, parseBody, type Validations } from './deliveries.js';

export function expectWebhook(
  step: Step,
  v: Validations,
  first: WebhookDelivery,
  matched: WebhookDelivery[],
  { cap, window, schemas }: { cap: number | undefined; window: string; schemas: SchemaRegistry | undefined },
): ValidationResult[] {
  const out: ValidationResult[] = [];
  const body = parseBody(first);
  if (!body.ok) {
    out.push(
      v.fail('schema_violation', 'the webhook body is a JSON object', body.problem, {
        json_pointer: '',
        expected: 'a JSON object body',
      }),
    );
    return out;
  }
  out.push(v.pass('the webhook body is a JSON object'));
  if (step.expect_idempotency_key !== false) out.push(idempotencyKeyValidation(v, body.value));
  const ref = typeof step.webhook_payload_schema_ref === 'string' ? step.webhook_payload_schema_ref : undefined;
  if (ref) out.push(payloadSchema(v, ref, body.value, schemas));
  if (cap !== undefined) {
    const keys = [...new Set(matched.map((d) => keyOf(d)).filter((k): k is string => typeof k === 'string'))];
    out.push(
      keys.length <= cap
        ? v.pass(`at most ${cap} logical event(s) (distinct idempotency_key) within ${window}`)
        : v.fail(
            'duplicate_webhook_on_replay',
            `at most ${cap} logical event(s) (distinct idempotency_key)`,
            `${keys.length} distinct idempotency_keys arrived within ${window}: the agent re-emitted the event (a replay must not re-execute)`,
            {
              json_pointer: '/idempotency_key',
              expected: `at most ${cap} distinct idempotency_key value(s)`,
              observed: keys,
            },
          ),
    );
  }
  return out;
}

function payloadSchema(
  v: Validations,
  ref: string,
  body: unknown,
  schemas: SchemaRegistry | undefined,
): ValidationResult {
  const description = `the payload validates against ${ref}`;
  if (!schemas || !schemas.resolveRef(ref)) {
    const presumed = schemas?.presumedIdentity(ref) ?? { schema_id: null, schema_url: null };
    return {
      ...v.fail(
        'schema_violation',
        description,
        `no AdCP schema "${ref}" is available to validate the webhook against`,
        { expected: ref, observed: { reason: 'schema_not_found', ref } },
      ),
      ...presumed,
    };
  }
  const verdict = schemas.validate(ref, body);
  if (verdict.valid) return { ...v.pass(description), schema_id: verdict.schema_id, schema_url: verdict.schema_url };
  return {
    ...v.fail(
      'schema_violation',
      description,
      verdict.errors
        .slice(0, 5)
        .map((e) => `${e.instance_path || '/'} ${e.message}`)
        .join('; '),
      {
        json_pointer: verdict.errors[0]?.instance_path ?? '',
        expected: verdict.schema_id,
        observed: verdict.errors,
      },
    ),
    schema_id: verdict.schema_id,
    schema_url: verdict.schema_url,
  };
}
