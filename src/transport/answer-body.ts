/**
 * The JSON-RPC answer in an HTTP body. A Streamable HTTP server (MCP) may
 * answer a POST with JSON or with server-sent events; in the second case the
 * stream can carry the server's own notifications and requests before the
 * response, so neither "the first `data:`" nor "the last" is the rule: the
 * answer is the event that is a JSON-RPC response — an object with `result` or
 * `error` — for the request's `id` when it is known. Events are read with
 * `eventsource-parser` (the parser the MCP SDK's own client uses), so an event
 * whose data spans several `data:` lines is one value, as the SSE format says.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface AnswerBodyOptions {
  /** The response's Content-Type: `text/event-stream` is read as events, anything else as JSON first. */
  contentType?: string;
  /** The JSON-RPC id of the request, to tell its response from other messages in the stream. */
  id?: string | number;
}

/**
 * The answer a body carries: the parsed JSON body, or the response event of an
 * event stream (else its last JSON event); undefined when the body is empty or
 * holds no JSON at all.
 */
export function jsonRpcAnswerIn(body: string, options: AnswerBodyOptions = {}): unknown {
  const text = body.trim();
  if (text === '') return undefined;
  const sse = (options.contentType ?? '').toLowerCase().includes('text/event-stream');
  if (!sse) {
    const json = parseJson(text);
    if (json !== NOT_JSON) return json;
  }
  return answerInEvents(text, options.id);
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

function answerInEvents(text: string, id: string | number | undefined): unknown {
  const values: unknown[] = [];
  const parser = createParser({ onEvent: (event: EventSourceMessage) => void values.push(parseJson(event.data)) });
  parser.feed(text);
  // A stream cut after its last event has no closing blank line: end it, so that event counts.
  parser.feed('\n\n');
  const json = values.filter((v) => v !== NOT_JSON);
  const isResponse = (v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && ('result' in v || 'error' in v);
  const responses = json.filter(isResponse);
  const forRequest = id === undefined ? responses : responses.filter((v) => (v as { id?: unknown }).id === id);
  return forRequest.at(-1) ?? responses.at(-1) ?? json.at(-1);
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** The error of a JSON-RPC error response (an `error` object with a numeric `code`); undefined for anything else. */
export function jsonRpcErrorOf(body: unknown): JsonRpcError | undefined {
  const error = (body as { error?: { code?: unknown; message?: unknown; data?: unknown } } | null)?.error;
  if (!error || typeof error !== 'object' || typeof error.code !== 'number') return undefined;
  return {
    code: error.code,
    message: String(error.message ?? ''),
    ...(error.data !== undefined ? { data: error.data } : {}),
  };
}

/** The text parsed when it is JSON, else the text itself: what the agent answered, either way. */
export function parseJsonOrText(text: string): unknown {
  const json = parseJson(text);
  return json === NOT_JSON ? text : json;
}
