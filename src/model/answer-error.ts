/**
 * Whether the agent answered a call with an error: the one rule every part of the runner uses — grading
 * (`expect_error`, an error on a step that does not expect one), the controller verdicts (UNKNOWN_SCENARIO), polling
 * `tasks/get`, the request-signing capability probe, the failure headline and the matchers.
 *
 * The answer is an error when
 *
 * 1. the transport took the error path (`extraction.path === 'error'`): MCP `isError: true`, an error-only
 *    `adcp_error` (structuredContent or text content), a failed / rejected / canceled A2A task or an error-only
 *    DataPart, a JSON-RPC error, an HTTP 4xx answer (transport/mcp.ts, transport/a2a.ts); or
 * 2. the agent answered with a JSON-RPC error (`rpcError`); or
 * 3. the task data carries an `adcp_error` object, whatever else it carries; or
 * 4. the task data has a non-empty top-level `errors[]` and no success payload (below); or
 * 5. the call was `comply_test_controller` and the answer is its ControllerError arm, `{ success: false, error:
 *    "UNKNOWN_SCENARIO", error_detail? }` — which a seller sends as a plain (non-isError) result. No other task's
 *    `success: false` counts: elsewhere it is a task field (provide_performance_feedback, update_content_standards).
 *
 * (3) and (4) also apply to a task payload nested under `payload`, where `findErrorCode` reads codes too.
 *
 * `errors[]` and the success payload. The AdCP response schemas carry `errors` two ways. Tasks with oneOf arms
 * (create-media-buy-response.json, update_media_buy, sync_*, activate_signal, …) have an error arm of `errors`
 * (minItems 1), `context` and `ext` only — their success arms forbid `errors` — but create_media_buy's and
 * sync_creatives' *submitted* arm (`status: "submitted"`, `task_id`) "MAY carry advisory errors for non-blocking
 * warnings". Flat schemas (get_products, list_creatives, get_signals, get_media_buy_delivery, …) have no error arm:
 * `errors` there are "task-specific errors and warnings" beside their required result (`products`, …), so the only
 * schema-valid way for such a task to refuse in the payload is its empty result plus `errors[]` (`{ products: [],
 * errors }`, which is what the fixture agent's error_errors_array answers). Hence:
 *
 * - a success payload is any top-level field other than the error arm's (`errors`, `adcp_error`, `context`, `ext`,
 *   content standards' `conflicting_standards_id`) and the protocol envelope's (`status`, `task_id`, `message`, …)
 *   that holds something: a non-empty string or array, a number other than 0, `true`, or an object holding such a
 *   value. An empty result — `[]`, `{}`, `null`, `""`, `0`, `false` (so `success: false`), `{ total_matching: 0 }` —
 *   is not one: it is the shape a flat task keeps while refusing;
 * - an in-flight async status (`submitted`, `working`, `input-required`) makes `errors[]` advisory (the submitted arm).
 *
 * So `{ errors }`, `{ errors, context }` and `{ products: [], errors }` are errors; `{ products: [p], errors }`,
 * `{ media_buy_id, packages, errors }` and `{ status: "submitted", task_id, errors }` are successes with warnings.
 * (The reference runner in @adcp/sdk 6.11 counts every non-empty `errors[]` as an error, which fails a success that
 * carries warnings; the 3.1 client asks for the task's required success fields, which calls `{ products: [],
 * errors }` a success.) The `error_code` check itself stays shape-agnostic (storyboard-schema.yaml > Error-shape
 * validation): `findErrorCode` reads a code wherever one is; this rule says whether the answer is an error.
 *
 * A transport failure (no answer at all) is not an error answer: callers handle `transportError` first.
 *
 * The code comes from `findErrorCode` (below), the `error_code` check's locator, so the code a grader names is the
 * one that check reads.
 *
 * Pure, and below engine/ and report/ in the layering: it imports neither.
 */
import { isPlainObject as isObject } from './path.js';
import type { Exchange } from './exchange.js';

/** The task whose ControllerError arm is an error answer (compliance/comply-test-controller-response.json). */
export const CONTROLLER_TASK = 'comply_test_controller';

/** The `scenario` a comply_test_controller step asks for in its `sample_request`; undefined for any other step. */
export function controllerScenario(step: { task?: string; sample_request?: unknown }): string | undefined {
  if (step.task !== CONTROLLER_TASK) return undefined;
  const scenario = (step.sample_request as { scenario?: unknown } | undefined)?.scenario;
  return typeof scenario === 'string' ? scenario : undefined;
}

/** What `answerError` needs of an answer: its task data, and what the transport says of it when known. */
export type AnswerLike = Pick<Exchange, 'data'> &
  Partial<Pick<Exchange, 'extraction' | 'rpcError' | 'transportError'>> & { request?: { operation?: string } };

export interface AnswerError {
  /** The AdCP error code, from where `findErrorCode` reads it; absent when the error carries none. */
  code?: string;
  /** The message beside the code (`adcp_error.message`, `errors[0].message`, the controller's `error_detail`), else the JSON-RPC or `message` text. */
  message?: string;
  /** Which part of the rule made it an error, in words (the transport's extraction note, "adcp_error in the task data", …). */
  where: string;
}

/**
 * Keys of the protocol envelope (core/protocol-envelope.json) and, since 3.1, of the version envelope composed into every
 * request and response (core/version-envelope.json: `adcp_version`, `adcp_major_version`): they ride in the task data
 * on MCP and A2A, and none of them is a task result.
 */
export const PROTOCOL_ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  'status',
  'task_id',
  'context_id',
  'context',
  'message',
  'timestamp',
  'ext',
  'adcp_version',
  'adcp_major_version',
  'progress',
  'push_notification_config',
  'replayed',
]);

/** Top-level keys of the schemas' error arms, besides the envelope: not a success payload either. */
const ERROR_ARM_KEYS: ReadonlySet<string> = new Set(['errors', 'adcp_error', 'conflicting_standards_id']);

/** Task statuses of a task still under way: `errors[]` beside them are advisory (create_media_buy's submitted arm). */
const IN_FLIGHT = new Set(['submitted', 'working', 'input-required']);

/**
 * The error-only shape: an object with only an `adcp_error` key (plus an optional context echo). The transports take
 * the contract's error path for it (runner-output-contract.yaml > extraction); rule 3 makes it an error either way.
 */
export function isErrorOnly(value: Record<string, unknown>): boolean {
  return 'adcp_error' in value && Object.keys(value).every((k) => k === 'adcp_error' || k === 'context');
}

/** Whether a controller's error shape may be this answer's: the call was comply_test_controller, or its task is not known (a bare MCP CallToolResult handed to a matcher). */
function mayBeControllerAnswer(answer: Pick<AnswerLike, 'request'>): boolean {
  const task = answer.request?.operation;
  return task === undefined || task === '' || task === CONTROLLER_TASK;
}

/** Whether a value holds something (see the header: an empty result is no success payload). Bounded in depth. */
function holdsSomething(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return depth >= 8 || Object.values(value).some((v) => holdsSomething(v, depth + 1));
  return false;
}

/** Rule 4: a non-empty `errors[]` with no success payload and no in-flight status beside it. */
function errorsWithoutPayload(body: Record<string, unknown>): boolean {
  if (!Array.isArray(body.errors) || body.errors.length === 0) return false;
  if (typeof body.status === 'string' && IN_FLIGHT.has(body.status)) return false;
  return !Object.entries(body).some(
    ([key, value]) => !PROTOCOL_ENVELOPE_KEYS.has(key) && !ERROR_ARM_KEYS.has(key) && holdsSomething(value),
  );
}

/** Rules 3 and 4 on one body (the task data, or a payload nested in it): which one applied, if any. */
function payloadError(body: Record<string, unknown>, name: string): string | undefined {
  if (isObject(body.adcp_error)) return `adcp_error in ${name}`;
  if (errorsWithoutPayload(body)) return `errors[] in ${name} without a success payload`;
  return undefined;
}

/**
 * Where the answer says it is an error, or undefined when it does not: the transport's error path, a JSON-RPC error,
 * else rules 3 to 5 on the task data (its payload, a controller's `success: false`).
 */
function errorWhere(
  answer: AnswerLike,
  data: Record<string, unknown> | undefined,
  controllerError: boolean,
): string | undefined {
  if (answer.extraction?.path === 'error') return answer.extraction.note ?? 'the transport took the error path';
  if (answer.rpcError) return `JSON-RPC error ${answer.rpcError.code}`;
  if (!data) return undefined;
  return (
    payloadError(data, 'the task data') ??
    (isObject(data.payload) ? payloadError(data.payload, 'payload') : undefined) ??
    (controllerError ? `${CONTROLLER_TASK} answered success: false` : undefined)
  );
}

/** Whether the agent answered with an error, and which: the rule in this module's header. */
export function answerError(answer: AnswerLike): AnswerError | undefined {
  if (answer.transportError) return undefined;
  const data = isObject(answer.data) ? answer.data : undefined;
  const controllerError =
    data !== undefined && mayBeControllerAnswer(answer) && data.success === false && typeof data.error === 'string';
  const where = errorWhere(answer, data, controllerError);
  if (where === undefined) return undefined;
  const found = findErrorCode(answer);
  const message =
    found?.message ??
    (controllerError ? nonEmptyString(data.error_detail) : undefined) ??
    nonEmptyString(answer.rpcError?.message) ??
    nonEmptyString(data?.message);
  return { ...(found ? { code: found.code } : {}), ...(message ? { message } : {}), where };
}

export interface FoundErrorCode {
  code: string;
  /** Where it was found, as a JSON Pointer into the extracted task data. */
  pointer: string;
  location: string;
  /** The message beside the code (`adcp_error.message`, `errors[0].message`, the controller's `error_detail`), when a string. */
  message?: string;
}

function valueAt(value: unknown, keys: readonly string[]): unknown {
  let current: unknown = value;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const nonEmptyString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined;

/** Where `findErrorCode` looks, in words: for messages that say where no code was found. */
export const ERROR_CODE_LOCATIONS =
  "adcp_error.code in structuredContent, text content, JSON-RPC error.data, errors[0].code (top-level or under payload), and comply_test_controller's error";

/**
 * Where a code may sit, in the client detection order of storyboard-schema.yaml > "Error-shape validation", each with
 * its JSON Pointer (relative to the extracted task data, like every other check) and the message beside it.
 */
const CANDIDATES: readonly {
  keys: readonly string[];
  messageKeys: readonly string[];
  pointer: string;
  location: string;
}[] = [
  {
    keys: ['adcp_error', 'code'],
    messageKeys: ['adcp_error', 'message'],
    pointer: '/adcp_error/code',
    location: 'adcp_error.code',
  },
  {
    keys: ['errors', '0', 'code'],
    messageKeys: ['errors', '0', 'message'],
    pointer: '/errors/0/code',
    location: 'errors[0].code',
  },
  {
    keys: ['payload', 'errors', '0', 'code'],
    messageKeys: ['payload', 'errors', '0', 'message'],
    pointer: '/payload/errors/0/code',
    location: 'payload.errors[0].code',
  },
  {
    keys: ['payload', 'adcp_error', 'code'],
    messageKeys: ['payload', 'adcp_error', 'message'],
    pointer: '/payload/adcp_error/code',
    location: 'payload.adcp_error.code',
  },
];

/**
 * Finds the AdCP error code wherever a transport binding may carry it, in the
 * client detection order of storyboard-schema.yaml > "Error-shape validation":
 * `adcp_error.code` (MCP structuredContent / A2A DataPart / text-fallback JSON,
 * i.e. the extracted data), JSON-RPC `error.data.adcp_error.code`, then
 * `errors[0].code` top-level or under `payload`; on a comply_test_controller answer
 * (or one whose task is not known), its ControllerError's `error`.
 *
 * Where a code is, not whether the answer is an error: `answerError` (answer-error.ts) decides that, and takes its
 * code from here.
 */
export function findErrorCode(answer: Pick<AnswerLike, 'data' | 'request'>): FoundErrorCode | undefined {
  // Pointers are relative to the extracted task data (structuredContent, the
  // parsed text content, or the JSON-RPC error's data), like every other check;
  // `extraction.path` and its note say which one that was.
  for (const candidate of CANDIDATES) {
    const code = nonEmptyString(valueAt(answer.data, candidate.keys));
    if (!code) continue;
    const message = nonEmptyString(valueAt(answer.data, candidate.messageKeys));
    return { code, pointer: candidate.pointer, location: candidate.location, ...(message ? { message } : {}) };
  }
  // comply_test_controller's own error shape (compliance/comply-test-controller-response: ControllerError):
  // `{ success: false, error: "<CODE>", error_detail }`. Another task's `error` string is no AdCP code.
  const data = answer.data as { success?: unknown; error?: unknown; error_detail?: unknown } | undefined;
  if (
    mayBeControllerAnswer(answer) &&
    data?.success === false &&
    typeof data.error === 'string' &&
    /^[A-Z][A-Z0-9_]{2,}$/.test(data.error)
  ) {
    const message = nonEmptyString(data.error_detail);
    return {
      code: data.error,
      pointer: '/error',
      location: 'error (controller error)',
      ...(message ? { message } : {}),
    };
  }
  return undefined;
}
