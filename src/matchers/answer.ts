/**
 * What a matcher judges: the agent's HTTP answer to an unauthenticated call
 * (when it receives the agent's URL — over MCP or, with `protocol: 'a2a'`, A2A),
 * or an answer already recorded (when it receives a record): an `Exchange`
 * from `transport/`, an HTTP probe (`transport/probe.ts`), a step record from
 * `task.meta.adcp` or the contract report (`{ response: { status, headers } }`),
 * a response record or a raw HTTP answer (`{ status, headers }`, headers as an
 * object or as [name, value] pairs).
 */
import { probeUnauthenticated, type ProbeOptions } from './probe.js';

export interface ObservedAnswer {
  /** "an unauthenticated list_creatives call" / "the recorded answer to list_creatives". */
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
}

/** An answer saying the task does not exist: JSON-RPC "method/tool not found", or an "unknown tool/skill" message. */
function isUnknownTask(exchange: { rpcError?: { code: number; message: string } }): boolean {
  const rpc = exchange.rpcError;
  if (!rpc) return false;
  return rpc.code === -32601 || /unknown (tool|skill)|(tool|skill) [^ ]+ (was )?not found|no such (tool|skill)/i.test(rpc.message);
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

function headerMap(headers: unknown): Record<string, string> {
  const entries: [string, unknown][] = Array.isArray(headers) ? headers.filter((h): h is [string, unknown] => Array.isArray(h) && typeof h[0] === 'string') : isObject(headers) ? Object.entries(headers) : [];
  const map: Record<string, string> = {};
  for (const [name, value] of entries) {
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    map[key] = key in map ? `${map[key]}, ${text}` : text;
  }
  return map;
}

/** An answer as recorded, or undefined when `received` is not one. */
export function recordedAnswer(received: unknown): ObservedAnswer | undefined {
  if (!isObject(received)) return undefined;
  const operation = isObject(received.request) && typeof received.request.operation === 'string' ? received.request.operation : undefined;
  const subject = operation ? `the recorded answer to ${operation}` : 'the recorded answer';
  // An exchange or a step record: the response rides under `response`.
  if ('response' in received || 'transportError' in received || 'request' in received) {
    const response = isObject(received.response) ? received.response : undefined;
    const status = typeof response?.status === 'number' ? response.status : undefined;
    const transportError = typeof received.transportError === 'string' ? received.transportError : typeof received.error === 'string' && status === undefined ? received.error : undefined;
    return { subject, status, headers: headerMap(response?.headers), ...(transportError ? { transportError } : {}), recorded: true };
  }
  // A response record, or a raw HTTP answer.
  if (typeof received.status === 'number') return { subject, status: received.status, headers: headerMap(received.headers), recorded: true };
  // A raw HTTP failure (transport/raw-http.ts: `{ error, durationMs }`).
  if (typeof received.error === 'string') return { subject, headers: {}, transportError: received.error, recorded: true };
  return undefined;
}

/** The answer a matcher judges: recorded, or obtained now by calling the agent at the URL without credentials. */
export async function observedAnswer(received: unknown, options: ProbeOptions = {}): Promise<ObservedAnswer> {
  const recorded = recordedAnswer(received);
  if (recorded) return recorded;
  if (typeof received !== 'string' || !/^https?:\/\//.test(received)) {
    throw new TypeError(
      `expected the agent's URL (a http(s) string), received ${typeof received === 'string' ? JSON.stringify(received) : received === null ? 'null' : typeof received}; or a recorded HTTP answer: an exchange or step record with a response, or { status, headers }`,
    );
  }
  const { task, exchange } = await probeUnauthenticated(received, options);
  return {
    subject: `an unauthenticated ${task} call`,
    status: exchange.response?.status,
    headers: headerMap(exchange.response?.headers),
    ...(exchange.transportError ? { transportError: exchange.transportError } : {}),
    ...(isUnknownTask(exchange) ? { unknownTask: task } : {}),
    recorded: false,
  };
}

/** "HTTP 200", "no HTTP answer (…)" — what the agent did, in a few words. */
export function describeObserved(answer: ObservedAnswer): string {
  if (answer.unknownTask) return `HTTP ${answer.status ?? '?'}: the agent has no task ${answer.unknownTask} (pick a task it serves with { task })`;
  if (answer.status !== undefined) return `HTTP ${answer.status}`;
  return `no HTTP answer (${answer.transportError ?? 'unknown transport error'})`;
}
