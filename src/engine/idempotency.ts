/**
 * `idempotency_key` on mutating tasks (storyboard-schema.yaml > Step >
 * omit_idempotency_key): a buyer sends a fresh key on every mutating call, so
 * the runner adds one where the storyboard's request has none — unless the
 * step sets `omit_idempotency_key` to test the missing-key rejection.
 * "Mutating" is read from the AdCP request schema: the tasks whose request
 * requires `idempotency_key`.
 */
import { randomUUID } from 'node:crypto';
import type { SchemaRegistry } from '../schemas/registry.js';
import type { Step } from '../model/storyboard.js';

export function withIdempotencyKey(
  payload: unknown,
  task: string,
  step: Step,
  schemas: SchemaRegistry | undefined,
): unknown {
  if (step.omit_idempotency_key === true || !schemas?.requiresIdempotencyKey(task)) return payload;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return payload;
  const current = (payload as Record<string, unknown>).idempotency_key;
  if (typeof current === 'string' && current.length > 0) return payload;
  return { ...(payload as Record<string, unknown>), idempotency_key: randomUUID() };
}
