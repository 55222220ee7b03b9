/**
 * The cross-response kinds (runner-output-contract.yaml > cross_response_check_kinds): graded on the response set a
 * runner contract's role produced for its step (`CheckInput.responses`), never on one answer.
 *
 * - `cross_response_field_equal` / `cross_response_count_distinct` (storyboard-schema.yaml > Cross-response
 *   assertions; test-kits/parallel-dispatch-runner.yaml): the resolved answers of a `parallel_dispatch` step, one per
 *   dispatch, IDEMPOTENCY_IN_FLIGHT already resolved by the role (roles/parallel-dispatch/).
 * - `replay_not_cached_rate_limit` (storyboard-schema.yaml > task: expect_rate_limit_not_replayed;
 *   test-kits/rate-limit-trip-runner.yaml): the answer that tripped the agent's rate limiter and the replay of its
 *   idempotency key after `retry_after` (roles/rate-limit-trip/).
 *
 * Outside the step of its contract a kind grades not_applicable: "Runners MUST gate dispatch of these checks on the
 * step declaring the appropriate `requires_contract:` and its accompanying parameter block; otherwise grade the
 * validation `not_applicable` per the forward-compat clause" — passed, with a `note` (as engine/grade.ts writes the
 * forward-compatibility one).
 *
 * Also here: what the two roles read of an answer (`dispatchOf`, `retryAfterOf`) and the structured result the
 * rate-limit trip's step is graded on (`tripResult`), so the roles and these graders agree on them.
 */
import { findErrorCode } from '../model/answer-error.js';
import type { Exchange } from '../model/exchange.js';
import { isPlainObject, parsePath, resolvePath, toJsonPointer } from '../model/path.js';
import { jsonEqual } from './equality.js';
import type { Check, CheckVerdict, ResponseSet } from './types.js';

type Dispatch = ResponseSet['dispatches'][number];

/** One answer of a response set: its data, its AdCP error code, or why there is none. */
export function dispatchOf(exchange: Exchange, timedOut = false): Dispatch {
  if (exchange.transportError) return { error: exchange.transportError, ...(timedOut ? { timedOut } : {}) };
  const code = findErrorCode(exchange)?.code;
  return { data: exchange.data, ...(code ? { errorCode: code } : {}), ...(timedOut ? { timedOut } : {}) };
}

/**
 * The error's `retry_after` (seconds) as the agent wrote it: beside the code `findErrorCode` found (core/error.json's
 * top-level `error.retry_after`: `adcp_error.retry_after`, `errors[0].retry_after`), else at the top of the data.
 * Undefined when it is not a number.
 */
export function retryAfterOf(exchange: Pick<Exchange, 'data' | 'request'>): number | undefined {
  const found = findErrorCode(exchange);
  const keys = found?.pointer.endsWith('/code') ? found.pointer.slice(1, -'/code'.length).split('/') : [];
  const beside = keys.reduce<unknown>(
    (v, key) => (Array.isArray(v) ? v[Number(key)] : isPlainObject(v) ? v[key] : undefined),
    exchange.data,
  );
  const value = isPlainObject(beside) && 'retry_after' in beside ? beside.retry_after : topRetryAfter(exchange.data);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function topRetryAfter(data: unknown): unknown {
  return isPlainObject(data) ? data.retry_after : undefined;
}

/**
 * The rate-limit trip's structured result, what its step's validations read (test-kits/rate-limit-trip-runner.yaml >
 * Cross-step assertion): `trip_response.<path>`, `replay_response.<path>`, `rate_limited_request.idempotency_key`.
 * With the replay's `context` echo beside them: the step's record shows the replay's request, and the run-wide
 * invariants (context.echo) judge the replay's answer against it.
 */
export function tripResult(
  trip: unknown,
  replay: unknown,
  request: { task: string; attempt: number; idempotency_key: unknown },
): Record<string, unknown> {
  const context = isPlainObject(replay) ? replay.context : undefined;
  return {
    trip_response: trip,
    replay_response: replay,
    rate_limited_request: request,
    ...(context !== undefined ? { context } : {}),
  };
}

const PARALLEL = 'parallel_dispatch_runner';
const TRIP = 'rate_limit_trip_runner';

function notApplicable(kind: string, contract: string, block: string): CheckVerdict {
  return {
    passed: true,
    note: `${kind} grades the response set of a step declaring requires_contract: ${contract} with a ${block} block, which the runner produced for this step; there is none — graded as not_applicable (storyboard-schema.yaml > Cross-response assertions)`,
  };
}

/** The path's JSON Pointer, up to its first wildcard. */
function pointerOf(path: string): string {
  const segments = parsePath(path);
  const wildcard = segments.indexOf('*');
  return toJsonPointer((wildcard === -1 ? segments : segments.slice(0, wildcard)) as (string | number)[]);
}

/** Each dispatch's value at `path`: undefined where the answer does not carry one (absent, `null`, no answer at all). */
function valuesAt(responses: ResponseSet, path: string): unknown[] {
  return responses.dispatches.map((d) => {
    if (d.data === undefined) return undefined;
    const found = resolvePath(d.data, path);
    return found.found && found.value !== null ? found.value : undefined;
  });
}

/** What a dispatch answered instead of a value, for the messages. */
function answered(d: Dispatch): string {
  if (d.error !== undefined) return `got no answer: ${d.error}`;
  return d.errorCode ? `answered ${d.errorCode}` : 'answered without it';
}

/**
 * `cross_response_field_equal`: every resolved answer carries a value at `path` (null counts as missing), all deeply
 * equal. "A missing value on a response is treated as a non-equal observation and fails the check."
 * `expected: { path }`, `actual: { observed_values }` — the values observed, in dispatch order.
 */
export const crossResponseFieldEqual: Check = ({ validation, responses }) => {
  if (responses?.contract !== PARALLEL) return notApplicable(validation.check, PARALLEL, 'parallel_dispatch');
  const path = String(validation.path ?? '');
  const values = valuesAt(responses, path);
  const observed = values.filter((v) => v !== undefined);
  const verdict = { json_pointer: pointerOf(path), expected: { path }, actual: { observed_values: observed } };
  const missing = values.findIndex((v) => v === undefined);
  if (missing !== -1) {
    const n = responses.dispatches.length;
    return {
      passed: false,
      ...verdict,
      error: `dispatch ${missing + 1} of ${n} carries no "${path}" (it ${answered(responses.dispatches[missing]!)}), so the ${n} dispatches do not converge on one value`,
    };
  }
  const differs = values.findIndex((v) => !jsonEqual(v, values[0]));
  if (differs === -1) return { passed: true, ...verdict };
  return {
    passed: false,
    ...verdict,
    error: `the dispatches answered different values at "${path}": dispatch 1 ${JSON.stringify(values[0])}, dispatch ${differs + 1} ${JSON.stringify(values[differs])}`,
  };
};

/**
 * `cross_response_count_distinct`: the number of distinct values observed at `path` across the resolved answers
 * (answers without one add none) is one of `allowed_values`. `expected: { path, allowed_values }`,
 * `actual: { observed_cardinality, observed_values }` — the distinct values.
 */
export const crossResponseCountDistinct: Check = ({ validation, responses }) => {
  if (responses?.contract !== PARALLEL) return notApplicable(validation.check, PARALLEL, 'parallel_dispatch');
  const path = String(validation.path ?? '');
  const allowed = Array.isArray(validation.allowed_values) ? validation.allowed_values : [];
  const distinct: unknown[] = [];
  for (const value of valuesAt(responses, path))
    if (value !== undefined && !distinct.some((seen) => jsonEqual(seen, value))) distinct.push(value);
  const verdict = {
    json_pointer: pointerOf(path),
    expected: { path, allowed_values: allowed },
    actual: { observed_cardinality: distinct.length, observed_values: distinct },
  };
  if (allowed.some((n) => jsonEqual(n, distinct.length))) return { passed: true, ...verdict };
  return {
    passed: false,
    ...verdict,
    error: `${distinct.length} distinct value(s) at "${path}" across ${responses.dispatches.length} dispatches, where ${JSON.stringify(allowed)} are allowed`,
  };
};

/**
 * `replay_not_cached_rate_limit`: the replay of the tripped idempotency key, after the RATE_LIMITED answer's
 * `retry_after`, is not RATE_LIMITED again — "fails iff both responses carry error.code = RATE_LIMITED"; a success or
 * another error (the handler re-executed) passes. The failure is the test kit's `rate_limit_response_cached_as_replay`.
 * Pointers are into the step's structured result (`tripResult`).
 */
export const replayNotCachedRateLimit: Check = ({ validation, responses }) => {
  if (responses?.contract !== TRIP || !responses.trip || !responses.replay)
    return notApplicable(validation.check, TRIP, 'rate_limit_trip');
  const { trip, replay } = responses;
  const codeAt = (key: string, data: unknown) => `/${key}${findErrorCode({ data })?.pointer ?? ''}`;
  const actual = { trip_error_code: trip.errorCode ?? null, replay_error_code: replay.errorCode ?? null };
  if (trip.errorCode !== 'RATE_LIMITED') {
    return {
      passed: false,
      json_pointer: codeAt('trip_response', trip.data),
      expected: { trip_error_code: 'RATE_LIMITED' },
      actual,
      error: `the trip answer is not RATE_LIMITED (${trip.errorCode ?? 'no error code'}), so there is no rate-limited key to replay`,
    };
  }
  const pointer = codeAt('replay_response', replay.data);
  if (replay.errorCode !== 'RATE_LIMITED') return { passed: true, json_pointer: pointer };
  return {
    passed: false,
    json_pointer: pointer,
    expected: { replay_error_code: 'not RATE_LIMITED: the handler re-executed (a success, or another error)' },
    actual,
    error:
      'rate_limit_response_cached_as_replay: the replay of the rate-limited idempotency_key, sent after its retry_after, answered RATE_LIMITED again — the rate-limited answer was cached as the replay for the key (security.mdx#idempotency rule 3: only successful responses are cached)',
  };
};
