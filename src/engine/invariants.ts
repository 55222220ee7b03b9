/**
 * Run-wide invariants: rules every step's answer must keep, whatever the
 * storyboard's own validations say. Each one that applies to a step adds a
 * validation `check: "invariant"` whose description starts with its id.
 *
 * - `context.echo` — storyboard-schema.yaml > "Context echo contract": a task
 *   answer (success or error) echoes the request's `context` verbatim, and
 *   never invents one the caller did not send. Not applied to answers that
 *   never reached the task layer (transport errors, HTTP-level rejections such
 *   as a 401 from an auth middleware), which have no task response to echo in.
 * - `context.no_secret_echo` — an answer never carries a credential the run
 *   sent, nor a credential-named field.
 * - `idempotency.conflict_no_payload_leak` — an IDEMPOTENCY_CONFLICT error
 *   carries no cached payload, original request or fingerprint
 *   (universal/idempotency.yaml).
 *
 * Invariants a storyboard names under `invariants:` that are not implemented
 * here are reported as warnings by the engine, never silently dropped.
 */
import { jsonEqual } from '../checks/equality.js';
import { findErrorCode } from '../checks/error-code.js';
import type { Exchange } from '../model/exchange.js';
import { PROTOCOL_ENVELOPE_KEYS } from '../model/answer-error.js';

export interface InvariantVerdict {
  id: string;
  passed: boolean;
  description: string;
  json_pointer: string | null;
  expected?: unknown;
  actual?: unknown;
  error?: string;
}

/** Invariants this version checks; the rest of a storyboard's `invariants:` list becomes a warning. */
export const IMPLEMENTED_INVARIANTS = new Set([
  'context.echo',
  'context.no_secret_echo',
  'idempotency.conflict_no_payload_leak',
]);

export function checkInvariants(exchange: Exchange, secrets: readonly string[]): InvariantVerdict[] {
  if (exchange.transportError || exchange.data === undefined) return [];
  const verdicts: InvariantVerdict[] = [];
  const echo = contextEcho(exchange);
  if (echo) verdicts.push(echo);
  verdicts.push(noSecretEcho(exchange, secrets));
  const leak = conflictNoPayloadLeak(exchange);
  if (leak) verdicts.push(leak);
  return verdicts;
}

function contextEcho(exchange: Exchange): InvariantVerdict | undefined {
  // An HTTP-level rejection (no MCP result) is not a task answer.
  if (exchange.extraction.note?.startsWith('HTTP ')) return undefined;
  return judgeContextEcho(contextOf(exchange.request.payload), contextOf(exchange.data));
}

/** The `context` of a request payload or a task answer (undefined when it is not an object or has none). */
export function contextOf(value: unknown): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as { context?: unknown }).context
    : undefined;
}

/**
 * The context echo rule on its own (also the `toEchoContext` matcher's): `got`
 * must equal `sent` verbatim; with nothing sent, nothing (or null) may come
 * back. Undefined when there is nothing to judge (nothing sent, nothing got).
 */
export function judgeContextEcho(sent: unknown, got: unknown): InvariantVerdict | undefined {
  const description = 'context.echo: the answer echoes the request context verbatim and never invents one';
  if (sent === undefined) {
    if (got === undefined || got === null) return undefined;
    return {
      id: 'context.echo',
      passed: false,
      description,
      json_pointer: '/context',
      expected: null,
      actual: got,
      error: 'the agent answered with a context the request did not send',
    };
  }
  if (jsonEqual(got, sent)) return { id: 'context.echo', passed: true, description, json_pointer: '/context' };
  return {
    id: 'context.echo',
    passed: false,
    description,
    json_pointer: '/context',
    expected: sent,
    actual: got ?? null,
    error:
      got === undefined || got === null
        ? 'the answer does not echo the request context'
        : 'the echoed context differs from the one sent',
  };
}

const CREDENTIAL_KEY = /^(authorization|api[_-]?key|x-api-key|bearer)$/i;

function noSecretEcho(exchange: Exchange, secrets: readonly string[]): InvariantVerdict {
  const description =
    'context.no_secret_echo: the answer carries no credential of the run and no credential-named field';
  const longSecrets = secrets.filter((s) => s.length >= 12);
  let found: { pointer: string; reason: string } | undefined;
  const visit = (value: unknown, pointer: string, depth: number): void => {
    if (found || depth > 64) return;
    if (typeof value === 'string') {
      if (longSecrets.some((s) => value.includes(s))) found = { pointer, reason: 'a credential this run sent' };
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (CREDENTIAL_KEY.test(key) && inner !== null && inner !== '' && inner !== undefined) {
        found = { pointer: at, reason: `a credential-named field "${key}"` };
        return;
      }
      visit(inner, at, depth + 1);
    }
  };
  // The context echo is the request's own context, verbatim (context.echo requires it): not a leak.
  const sent = (exchange.request.payload as { context?: unknown } | undefined)?.context;
  const data = exchange.data as Record<string, unknown> | null;
  const echoed = data !== null && typeof data === 'object' && sent !== undefined && jsonEqual(data.context, sent);
  visit(echoed ? { ...data, context: undefined } : exchange.data, '', 0);
  if (!found) return { id: 'context.no_secret_echo', passed: true, description, json_pointer: null };
  return {
    id: 'context.no_secret_echo',
    passed: false,
    description,
    json_pointer: found.pointer,
    expected: 'no credential in the answer',
    actual: '[redacted]',
    error: `the answer carries ${found.reason}`,
  };
}

/** Keys an IDEMPOTENCY_CONFLICT answer may carry: the error itself and the envelope (protocol and version envelope). */
const CONFLICT_TOP_KEYS: ReadonlySet<string> = new Set(['adcp_error', 'errors', ...PROTOCOL_ENVELOPE_KEYS]);
const CONFLICT_ERROR_KEYS = new Set(['code', 'message', 'field', 'suggestion', 'recovery', 'retry_after', 'retryable']);

function conflictNoPayloadLeak(exchange: Exchange): InvariantVerdict | undefined {
  const found = findErrorCode(exchange);
  if (found?.code !== 'IDEMPOTENCY_CONFLICT') return undefined;
  const description =
    'idempotency.conflict_no_payload_leak: an IDEMPOTENCY_CONFLICT error carries no cached payload, request or fingerprint';
  const data = exchange.data as Record<string, unknown>;
  const extra: string[] = Object.keys(data)
    .filter((k) => !CONFLICT_TOP_KEYS.has(k))
    .map((k) => `/${k}`);
  const error = data.adcp_error;
  if (error && typeof error === 'object')
    extra.push(
      ...Object.keys(error)
        .filter((k) => !CONFLICT_ERROR_KEYS.has(k))
        .map((k) => `/adcp_error/${k}`),
    );
  for (const [i, item] of (Array.isArray(data.errors) ? data.errors : []).entries()) {
    if (item && typeof item === 'object')
      extra.push(
        ...Object.keys(item)
          .filter((k) => !CONFLICT_ERROR_KEYS.has(k))
          .map((k) => `/errors/${i}/${k}`),
      );
  }
  if (extra.length === 0)
    return { id: 'idempotency.conflict_no_payload_leak', passed: true, description, json_pointer: null };
  return {
    id: 'idempotency.conflict_no_payload_leak',
    passed: false,
    description,
    json_pointer: extra[0]!,
    expected: 'only the error (code, message, field, suggestion, recovery) and the envelope',
    actual: extra,
    error: `the conflict error carries fields beyond the error and envelope: ${extra.join(', ')}`,
  };
}
