/**
 * The one place a matcher's received value becomes what it judges. Accepted:
 *
 * - the agent's URL (the URL form of the auth matchers: they call a task
 *   without credentials, over MCP or, with `protocol: 'a2a'`, A2A);
 * - a `createAdcpClient()` response, or an `Exchange` from `transport/`;
 * - a step result (`StepResult`, a `StepOutcome`, `task.meta.adcp`, a contract
 *   report record): `{ step_id, validations, request, response, … }`;
 * - a Fetch `Response` (its body is read from a clone);
 * - an MCP `CallToolResult` (`{ content, structuredContent?, isError? }`);
 * - a raw HTTP answer: `{ status, headers }` (headers an object or [name, value]
 *   pairs), `{ response: { status, headers } }`, or a raw failure `{ error }`.
 *
 * Task data is extracted as the engine extracts it (transport/mcp.ts,
 * transport/a2a.ts), so a matcher sees what a storyboard check would see.
 * Records are judged synchronously; a URL or a Fetch `Response` needs I/O, so
 * for those the answer (and the matcher) is a Promise.
 */
import type { Exchange } from '../model/exchange.js';
import type { ExtractionRecord, RequestRecord, StepResult } from '../model/records.js';
import { extractA2aResult } from '../transport/a2a-extract.js';
import { jsonRpcAnswerIn } from '../transport/answer-body.js';
import { extractMcpResult } from '../transport/mcp-extract.js';
import { probeUnauthenticated, type ProbeOptions } from './probe.js';

export interface ObservedAnswer {
  /** "an unauthenticated list_creatives call" / "the recorded answer to list_creatives" / "the fetch Response". */
  subject: string;
  status?: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** Why there is no HTTP answer, when there is none. */
  transportError?: string;
  /** Whether the answer was read from a record rather than obtained by calling the agent. */
  recorded: boolean;
  /** The task the call named, when the agent answered that it has no such task (so nothing about auth was learnt). */
  unknownTask?: string;
  /** The task called, when the received value says. */
  task?: string;
  /** The request as sent, when the received value carries it (its `payload.context` is what an echo is judged against). */
  request?: RequestRecord;
  /** The task data, extracted as the engine does; absent from an HTTP-only answer (`{ status, headers }`). */
  taskData?: { extraction: ExtractionRecord; data: unknown; rpcError?: Exchange['rpcError'] };
  /** The step result, when a step's record was received. */
  step?: StepResult;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** An answer saying the task does not exist: JSON-RPC "method/tool not found", or an "unknown tool/skill" message. */
function isUnknownTask(exchange: { rpcError?: { code: number; message: string } }): boolean {
  const rpc = exchange.rpcError;
  if (!rpc) return false;
  return (
    rpc.code === -32601 ||
    /unknown (tool|skill)|(tool|skill) [^ ]+ (was )?not found|no such (tool|skill)/i.test(rpc.message)
  );
}

function headerMap(headers: unknown): Record<string, string> {
  if (
    isObject(headers) &&
    typeof (headers as { forEach?: unknown }).forEach === 'function' &&
    typeof (headers as { get?: unknown }).get === 'function'
  ) {
    // A Fetch `Headers` (joins repeated fields with ", ", which a challenge list allows).
    const map: Record<string, string> = {};
    (headers as unknown as Headers).forEach((value, name) => (map[name.toLowerCase()] = value));
    return map;
  }
  const entries: [string, unknown][] = Array.isArray(headers)
    ? headers.filter((h): h is [string, unknown] => Array.isArray(h) && typeof h[0] === 'string')
    : isObject(headers)
      ? Object.entries(headers)
      : [];
  const map: Record<string, string> = {};
  for (const [name, value] of entries) {
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    map[key] = key in map ? `${map[key]}, ${text}` : text;
  }
  return map;
}

/** The task data of a recorded response payload, extracted as the transport that recorded it would. */
function taskDataOfPayload(
  payload: unknown,
  transport: unknown,
  recorded?: ExtractionRecord,
): ObservedAnswer['taskData'] {
  if (payload === undefined) return undefined;
  if (isObject(payload) && isObject(payload.error) && typeof payload.error.code === 'number') {
    // A JSON-RPC error (alone, or in its envelope): the task data is its `data`, as transport/mcp.ts reads it.
    const error = payload.error as { code: number; message?: unknown; data?: unknown };
    return {
      extraction: recorded ?? { path: 'error', note: 'JSON-RPC error response' },
      data: error.data ?? {},
      rpcError: { code: error.code, message: String(error.message ?? ''), data: error.data },
    };
  }
  if (transport === 'a2a') {
    const { extraction, data } = extractA2aResult(payload);
    return { extraction, data };
  }
  if (isObject(payload) && ('structuredContent' in payload || 'content' in payload || 'isError' in payload))
    return extractMcpResult(payload);
  // An HTTP error body without a JSON-RPC error: that body is the data (transport/mcp.ts does the same).
  return { extraction: recorded ?? { path: 'error' }, data: payload };
}

const isStepResult = (value: Record<string, unknown>): boolean =>
  typeof value.step_id === 'string' && Array.isArray(value.validations);
const isExchange = (value: Record<string, unknown>): boolean =>
  isObject(value.request) && isObject(value.extraction) && 'data' in value;
const isFetchResponse = (value: unknown): value is Response =>
  (typeof Response !== 'undefined' && value instanceof Response) ||
  (isObject(value) &&
    typeof value.status === 'number' &&
    typeof (value.headers as { get?: unknown } | undefined)?.get === 'function' &&
    typeof value.clone === 'function');
const isCallToolResult = (value: Record<string, unknown>): boolean =>
  (Array.isArray(value.content) || 'structuredContent' in value) && !('status' in value) && !('request' in value);

/** What every recorded answer says of itself: its subject, and the task and request when the record carries them. */
interface RecordedAbout {
  subject: string;
  operation?: string;
  request?: RequestRecord;
}

/** An answer as recorded, or undefined when `received` is not a record. */
function recordedAnswer(received: unknown): ObservedAnswer | undefined {
  if (!isObject(received)) return undefined;
  // A StepOutcome ({ status, result }) from the engine: its result is the step record.
  if (isObject(received.result) && isStepResult(received.result) && typeof received.status === 'string')
    return recordedAnswer(received.result);
  const about = recordedAbout(received);
  if (isExchange(received)) return exchangeAnswer(received as unknown as Exchange, about);
  // A step record, or an HTTP probe's `{ request?, response }`: the response rides under `response`.
  if ('response' in received || 'transportError' in received || 'request' in received || isStepResult(received))
    return stepRecordAnswer(received, about);
  if (isCallToolResult(received)) {
    // An MCP CallToolResult (e.g. from @modelcontextprotocol/sdk's client.callTool): task data, no HTTP.
    return { subject: 'the CallToolResult', headers: {}, recorded: true, taskData: extractMcpResult(received) };
  }
  // A response record, or a raw HTTP answer.
  if (typeof received.status === 'number') return httpAnswer(received, received.status, about.subject);
  // A raw HTTP failure (transport/raw-http.ts: `{ error, durationMs }`).
  if (typeof received.error === 'string')
    return { subject: about.subject, headers: {}, transportError: received.error, recorded: true };
  return undefined;
}

/** The request a record carries, the task it names, and so its subject ("the recorded answer to list_creatives"). */
function recordedAbout(received: Record<string, unknown>): RecordedAbout {
  const request = isObject(received.request) ? (received.request as unknown as RequestRecord) : undefined;
  const operation =
    typeof request?.operation === 'string'
      ? request.operation
      : typeof received.task === 'string'
        ? received.task
        : undefined;
  const subject = operation ? `the recorded answer to ${operation}` : 'the recorded answer';
  return { subject, operation, request };
}

/** A createAdcpClient() response or a transport Exchange: the engine's own record, data already extracted. */
function exchangeAnswer(exchange: Exchange, { subject, operation, request }: RecordedAbout): ObservedAnswer {
  const response = exchange.response;
  return {
    subject,
    status: response?.status,
    headers: headerMap(response?.headers),
    ...(exchange.transportError ? { transportError: exchange.transportError } : {}),
    recorded: true,
    ...(operation ? { task: operation } : {}),
    ...(request ? { request } : {}),
    ...(exchange.transportError && exchange.data === undefined
      ? {}
      : {
          taskData: {
            extraction: exchange.extraction,
            data: exchange.data,
            ...(exchange.rpcError ? { rpcError: exchange.rpcError } : {}),
          },
        }),
  };
}

/** A step record, or an HTTP probe's `{ request?, response }`: status, headers and task data from its `response`. */
function stepRecordAnswer(
  received: Record<string, unknown>,
  { subject, operation, request }: RecordedAbout,
): ObservedAnswer {
  const response = isObject(received.response) ? received.response : undefined;
  const status = typeof response?.status === 'number' ? response.status : undefined;
  const transportError = recordedTransportError(received, status);
  const extraction = isObject(received.extraction) ? (received.extraction as unknown as ExtractionRecord) : undefined;
  const taskData = response ? taskDataOfPayload(response.payload, response.transport, extraction) : undefined;
  return {
    subject,
    status,
    headers: headerMap(response?.headers),
    ...(transportError ? { transportError } : {}),
    recorded: true,
    ...(operation ? { task: operation } : {}),
    ...(request ? { request } : {}),
    ...(taskData ? { taskData } : {}),
    ...(isStepResult(received) ? { step: received as unknown as StepResult } : {}),
  };
}

/** Why a step record has no HTTP answer: its `transportError`, or a probe's `error` when there is no status. */
function recordedTransportError(received: Record<string, unknown>, status: number | undefined): string | undefined {
  if (typeof received.transportError === 'string') return received.transportError;
  return typeof received.error === 'string' && status === undefined ? received.error : undefined;
}

/** A response record, or a raw HTTP answer: `{ status, headers, payload? }`. */
function httpAnswer(received: Record<string, unknown>, status: number, subject: string): ObservedAnswer {
  const taskData = 'payload' in received ? taskDataOfPayload(received.payload, received.transport) : undefined;
  return {
    subject,
    status,
    headers: headerMap(received.headers),
    recorded: true,
    ...(taskData ? { taskData } : {}),
  };
}

/** A Fetch `Response`: status and headers, and the body (read from a clone, so the caller can still read it) as task data. */
async function fetchAnswer(response: Response): Promise<ObservedAnswer> {
  const answer: ObservedAnswer = {
    subject: 'the fetch Response',
    status: response.status,
    headers: headerMap(response.headers),
    recorded: true,
  };
  if (response.bodyUsed) return answer;
  const text = await response.clone().text();
  const json = jsonRpcAnswerIn(text);
  if (json === undefined) return answer;
  // An MCP or A2A JSON-RPC answer carries the task result under `result`; anything else is the data itself.
  const result = isObject(json) && 'result' in json ? json.result : json;
  const looksA2a = isObject(result) && (result.kind === 'task' || result.kind === 'message');
  const taskData = taskDataOfPayload(isObject(json) && 'error' in json ? json : result, looksA2a ? 'a2a' : 'mcp');
  return { ...answer, ...(taskData ? { taskData } : {}) };
}

const RECORDS =
  'a createAdcpClient() response, a step result, a fetch Response, an MCP CallToolResult, or { status, headers }';

/** What a matcher tells the user it accepts, when given something else: without `accepts`, the auth matchers' URL or a record. */
export function unsupportedReceived(received: unknown, accepts?: string): TypeError {
  const what =
    typeof received === 'string'
      ? JSON.stringify(received)
      : received === null
        ? 'null'
        : Array.isArray(received)
          ? 'an array'
          : typeof received;
  return new TypeError(
    accepts
      ? `expected ${accepts}, received ${what}`
      : `expected the agent's URL (a http(s) string), received ${what}; or a recorded answer: ${RECORDS}`,
  );
}

/**
 * The answer a matcher judges: recorded (synchronously), or — for a Fetch
 * `Response`, or the agent's URL when `probe` options are given (the auth
 * matchers' URL form) — a Promise of it.
 */
function observedAnswer(received: unknown, probe?: ProbeOptions): ObservedAnswer | Promise<ObservedAnswer> {
  if (isFetchResponse(received)) return fetchAnswer(received);
  const recorded = recordedAnswer(received);
  if (recorded) return recorded;
  if (!probe || typeof received !== 'string' || !/^https?:\/\//.test(received))
    throw unsupportedReceived(received, probe ? undefined : `an agent response: ${RECORDS}`);
  return probeUnauthenticated(received, probe).then(({ task, exchange }) => ({
    subject: `an unauthenticated ${task} call`,
    status: exchange.response?.status,
    headers: headerMap(exchange.response?.headers),
    ...(exchange.transportError ? { transportError: exchange.transportError } : {}),
    ...(isUnknownTask(exchange) ? { unknownTask: task } : {}),
    recorded: false,
    task,
    request: exchange.request,
    ...(exchange.data !== undefined
      ? {
          taskData: {
            extraction: exchange.extraction,
            data: exchange.data,
            ...(exchange.rpcError ? { rpcError: exchange.rpcError } : {}),
          },
        }
      : {}),
  }));
}

/**
 * Judges the answer now when it is recorded, or once it arrives: a matcher is
 * synchronous on records, a Promise on a Response or (with `probe`) a URL.
 */
export function judge<R>(
  received: unknown,
  probe: ProbeOptions | undefined,
  verdict: (answer: ObservedAnswer) => R,
): R | Promise<R> {
  const answer = observedAnswer(received, probe);
  return answer instanceof Promise ? answer.then(verdict) : verdict(answer);
}

/** The answer as an `Exchange`, for the engine's checks and rules (`findErrorCode`, `answerError`, …); undefined without task data. */
export function exchangeOf(answer: ObservedAnswer): Exchange | undefined {
  if (!answer.taskData) return undefined;
  return {
    request: answer.request ?? { transport: 'http', operation: answer.task ?? '', payload: undefined },
    extraction: answer.taskData.extraction,
    data: answer.taskData.data,
    ...(answer.taskData.rpcError ? { rpcError: answer.taskData.rpcError } : {}),
    ...(answer.transportError ? { transportError: answer.transportError } : {}),
  };
}

/** "HTTP 200", "no HTTP answer (…)" — what the agent did, in a few words. */
export function describeObserved(answer: ObservedAnswer): string {
  if (answer.unknownTask)
    return `HTTP ${answer.status ?? '?'}: the agent has no task ${answer.unknownTask} (pick a task it serves with { task })`;
  if (answer.status !== undefined) return `HTTP ${answer.status}`;
  if (answer.transportError === undefined && answer.taskData) return `no HTTP status (${answer.subject} carries none)`;
  return `no HTTP answer (${answer.transportError ?? 'unknown transport error'})`;
}
