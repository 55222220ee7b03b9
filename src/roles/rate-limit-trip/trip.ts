/**
 * `expect_rate_limit_not_replayed` (storyboard-schema.yaml > task: expect_rate_limit_not_replayed;
 * test-kits/rate-limit-trip-runner.yaml): trip the agent's rate limiter with a burst, then replay the tripped key.
 *
 * 1. Burst: up to `max_attempts` sequential calls of `trip_target_task` with `trip_target_sample_request` (built once,
 *    as a step's own request is: substitution, credentials, the request builder), each with a fresh idempotency_key,
 *    as fast as the agent answers. The first answer with error code RATE_LIMITED trips it. An answer with another
 *    error, or no answer, stops the burst and fails the step: the burst needs a request the agent accepts, and
 *    without one the invariant cannot be reached (the test kit names no outcome for it; the reference runner fails the
 *    step too). No trip within `max_attempts`: not_applicable, detail exactly `rate_limit_not_triggered`, before any
 *    validation (runner-output-contract.yaml > skip_result > reasons > not_applicable).
 * 2. Wait: the trip's `retry_after` (seconds; beside its error code). None, or 0: the step fails
 *    `missing_retry_after`; more than `replay_max_wait_seconds` (default 30): `replay_wait_exceeded` — neither is the
 *    invariant itself, and no replay is sent. A value below 1 s is waited as 1 s (core/error.json: clients clamp).
 * 3. Replay: the tripped request again — same key, same payload — with a distinct `context.correlation_id` so its
 *    answer is traceable. The step is graded on the structured result (checks/cross-response.ts `tripResult`) with
 *    the trip and the replay as its response set, which `replay_not_cached_rate_limit` reads.
 *
 * The calls go over a transport of the role's own (index.ts): the run's answers a RATE_LIMITED by waiting and resending
 * (transport/rate-limit.ts), and this step must see the rate-limited answer itself.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { dispatchOf, retryAfterOf, tripResult } from '../../checks/cross-response.js';
import type { RoleOutcome, RoleStepHelp } from '../../engine/role.js';
import { answerError, findErrorCode } from '../../model/answer-error.js';
import type { Exchange } from '../../model/exchange.js';
import { isPlainObject } from '../../model/path.js';
import type { StepResult, ValidationResult } from '../../model/records.js';
import type { Step } from '../../model/storyboard.js';
import type { AgentTransport, CallOptions } from '../../transport/types.js';

export const RATE_LIMIT_TRIP_CONTRACT = 'rate_limit_trip_runner';
export const RATE_LIMIT_TRIP_TASK = 'expect_rate_limit_not_replayed';
/** The test kit's `rate_limit_not_triggered`: canonical_detail_sub_reasons.not_applicable. */
const NOT_TRIGGERED = 'rate_limit_not_triggered';
/** test-kits/rate-limit-trip-runner.yaml > burst_step_contract: max_attempts_min, max_attempts_max. */
const MAX_ATTEMPTS = { min: 50, max: 500 };
/** test-kits/rate-limit-trip-runner.yaml > Wait + replay mechanism: the cap's default. */
export const DEFAULT_REPLAY_MAX_WAIT_S = 30;

type TripBlock = NonNullable<Step['rate_limit_trip']>;

export interface TripContext {
  transport: AgentTransport;
  /** The storyboard file, for the runner's validations' `source`. */
  file: string;
}

/** Why the step's `rate_limit_trip` block cannot be run as the test kit defines it, or undefined. */
export function misconfigured(block: Step['rate_limit_trip']): string | undefined {
  if (!isPlainObject(block))
    return `${RATE_LIMIT_TRIP_TASK} needs a rate_limit_trip block (trip_target_task, trip_target_sample_request, max_attempts)`;
  if (typeof block.trip_target_task !== 'string' || block.trip_target_task === '')
    return 'rate_limit_trip.trip_target_task must name the mutating task the burst targets';
  if (!isPlainObject(block.trip_target_sample_request))
    return 'rate_limit_trip.trip_target_sample_request must be the request body (an object)';
  const n = block.max_attempts;
  if (!Number.isInteger(n) || n < MAX_ATTEMPTS.min || n > MAX_ATTEMPTS.max)
    return `rate_limit_trip.max_attempts must be an integer from ${MAX_ATTEMPTS.min} to ${MAX_ATTEMPTS.max} (test-kits/rate-limit-trip-runner.yaml > burst_step_contract); it is ${JSON.stringify(n)}`;
  return undefined;
}

/** The step's run: burst, wait, replay (the header). `block` has passed `misconfigured`. */
export async function runTrip(
  context: TripContext,
  step: Step,
  result: StepResult,
  help: RoleStepHelp,
): Promise<RoleOutcome> {
  const block = step.rate_limit_trip as TripBlock;
  const task = block.trip_target_task;
  const built = await help.request({ task, sample_request: block.trip_target_sample_request });
  if ('record' in built) return { result: built.record };
  const { payload, callOptions } = built;
  let last: Exchange | undefined;
  for (let attempt = 1; attempt <= block.max_attempts; attempt++) {
    const key = randomUUID();
    const sent = { ...payload, idempotency_key: key };
    const exchange = (last = await context.transport.call(task, sent, callOptions));
    if (exchange.transportError)
      return failed(result, exchange, `attempt ${attempt} of the burst got no answer: ${exchange.transportError}`);
    const error = answerError(exchange);
    if (error?.code === 'RATE_LIMITED')
      return afterTrip(context, step, result, { block, sent, trip: exchange, attempt, key, callOptions });
    if (error)
      return failed(
        result,
        exchange,
        `attempt ${attempt} of the burst: the agent answered ${task} with ${error.code ? `the error ${error.code}` : 'an error'}${error.message ? ` (${error.message})` : ''}, not a result or RATE_LIMITED — the burst needs a request the agent accepts, until its rate limiter trips`,
      );
  }
  return {
    skip: { reason: 'not_applicable', detail: NOT_TRIGGERED },
    ...(last ? { record: { request: last.request, ...(last.response ? { response: last.response } : {}) } } : {}),
  };
}

interface Tripped {
  block: TripBlock;
  /** The request that tripped the limiter, as sent. */
  sent: Record<string, unknown>;
  trip: Exchange;
  attempt: number;
  key: string;
  callOptions: CallOptions;
}

async function afterTrip(context: TripContext, step: Step, result: StepResult, tripped: Tripped): Promise<RoleOutcome> {
  const { block, trip, sent } = tripped;
  const seconds = retryAfterOf(trip);
  const found = findErrorCode(trip);
  const pointer = found?.pointer.endsWith('/code') ? `${found.pointer.slice(0, -'/code'.length)}/retry_after` : null;
  const runnerFailure = (check: string, expected: unknown, error: string): RoleOutcome =>
    failed(result, trip, `${check}: ${error}`, {
      check,
      passed: false,
      description: `the RATE_LIMITED answer's retry_after lets the runner replay the key (test-kits/rate-limit-trip-runner.yaml)`,
      json_pointer: pointer,
      expected,
      actual: seconds ?? null,
      schema_id: null,
      schema_url: null,
      request: trip.request,
      response: trip.response ?? null,
      source: { file: context.file, line: step.loc.line, column: step.loc.column },
    });
  if (seconds === undefined || seconds <= 0)
    return runnerFailure(
      'missing_retry_after',
      'retry_after: seconds, > 0',
      `attempt ${tripped.attempt}'s RATE_LIMITED answer carries no positive retry_after, so a buyer cannot tell when to retry`,
    );
  const cap = block.replay_max_wait_seconds ?? DEFAULT_REPLAY_MAX_WAIT_S;
  if (seconds > cap)
    return runnerFailure(
      'replay_wait_exceeded',
      { retry_after_at_most: cap },
      `the RATE_LIMITED answer asks for ${seconds} s, more than rate_limit_trip.replay_max_wait_seconds (${cap} s); the replay was not sent`,
    );
  await sleep(Math.min(Math.max(seconds, 1), 3600) * 1000);
  const replay = await context.transport.call(block.trip_target_task, replayOf(sent), tripped.callOptions);
  if (replay.transportError)
    return failed(result, replay, `the replay of the rate-limited key got no answer: ${replay.transportError}`);
  const data = tripResult(trip.data, replay.data, {
    task: block.trip_target_task,
    attempt: tripped.attempt,
    idempotency_key: tripped.key,
  });
  return {
    exchange: {
      request: replay.request,
      ...(replay.response ? { response: replay.response } : {}),
      // Not the replay's own extraction: an error replay is graded by the checks, not taken for the step's failure.
      extraction: {
        path: 'none',
        note: 'the runner-built rate_limit_trip result: trip_response, replay_response, rate_limited_request (test-kits/rate-limit-trip-runner.yaml)',
      },
      data,
    },
    responses: {
      contract: RATE_LIMIT_TRIP_CONTRACT,
      dispatches: [dispatchOf(trip), dispatchOf(replay)],
      trip: { data: trip.data, ...codeOf(trip) },
      replay: { data: replay.data, ...codeOf(replay) },
    },
  };
}

function codeOf(exchange: Exchange): { errorCode?: string } {
  const code = findErrorCode(exchange)?.code;
  return code ? { errorCode: code } : {};
}

/** The replay: the tripped request, its `context.correlation_id` made distinct (context is outside the canonical hash). */
function replayOf(sent: Record<string, unknown>): Record<string, unknown> {
  const context = sent.context;
  if (context !== undefined && !isPlainObject(context)) return { ...sent };
  const id =
    isPlainObject(context) && typeof context.correlation_id === 'string' ? context.correlation_id : 'rate_limit_trip';
  return { ...sent, context: { ...(context ?? {}), correlation_id: `${id}:replay` } };
}

function failed(result: StepResult, exchange: Exchange, error: string, validation?: ValidationResult): RoleOutcome {
  return {
    result: {
      ...result,
      request: exchange.request,
      ...(exchange.response ? { response: exchange.response } : {}),
      extraction: exchange.extraction,
      ...(validation ? { validations: [validation] } : {}),
      error,
    },
  };
}
