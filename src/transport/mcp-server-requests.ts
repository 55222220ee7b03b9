/**
 * What the runner watches of an MCP session's traffic during one call: the agent's server→client requests (bounded
 * per call) and its JSON-RPC responses (each must answer a request the runner sent). Either stops the call with a
 * one-line reason that is the agent's doing. mcp.ts opens the sessions and makes the calls.
 */
import { ResponseTooLargeError } from './http.js';

/** The state of a session this module keeps (mcp.ts's Connection has it). */
export interface WatchedSession {
  /** Server→client requests (ping, sampling, …) received since the current call began (boundServerRequests). */
  serverRequests: number;
  /**
   * Why the call in progress was stopped by the agent's doing: server→client requests over MAX_SERVER_REQUESTS_PER_CALL,
   * an answer over maxResponseBytes in a stream the SDK reads on its own, an answer to a request id never sent.
   */
  flood?: CallStopped;
  /** Stops the call in progress (its MCP request, or the connection's initialize) with that reason. */
  onFlood?: (reason: CallStopped) => void;
  /** JSON-RPC ids of the requests sent on this connection and not answered yet (JSON text of each id). */
  pending: Set<string>;
  /** The JSON-RPC error the agent answered to a request of the current call: its `-32000`/`-32001` are its answer, not the SDK's "connection closed"/"timeout". */
  answeredError?: { code: unknown; message: unknown };
}

/** A reason the runner stops a call that is the agent's doing: reported in one line, never retried on a fresh session. */
export type CallStopped = ServerRequestFlood | StrayAnswer | ResponseTooLargeError;

/**
 * Server→client requests (`ping`, `sampling/createMessage`, `roots/list`, … — JSON-RPC requests the agent sends in
 * the server-sent events of an answer, in a JSON batch, or on the session's own event stream) the runner answers
 * during one call. The SDK answers each one with a POST back (a ping with `{}`, anything else with "method not found"),
 * without limit: 24k pings in one answer were 24k POSTs, 616–790 MB in a worker and the next step 16 s late. A
 * conformant agent needs none of them for an AdCP task; past the bound they are dropped unanswered and the call
 * fails with a transport error naming the bound; the session is dropped (which closes its streams).
 */
export const MAX_SERVER_REQUESTS_PER_CALL = 32;

/** The reason a call was stopped by a server→client request flood (a one-line transport error). */
class ServerRequestFlood extends Error {
  constructor(method: unknown) {
    const shown = typeof method === 'string' && /^[\w./-]{1,64}$/.test(method) ? ` (the last one: ${method})` : '';
    super(
      `the agent sent more than ${MAX_SERVER_REQUESTS_PER_CALL} server-to-client JSON-RPC requests during one call${shown}; the runner answers at most ${MAX_SERVER_REQUESTS_PER_CALL} per call (MAX_SERVER_REQUESTS_PER_CALL), so the call was stopped and the session dropped`,
    );
    this.name = 'ServerRequestFlood';
  }
}

/** An id as the agent sent it, quoted on one line and cut short: JSON, with anything outside printable ASCII escaped. */
function quotedId(id: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(id) ?? String(id);
  } catch {
    text = String(id);
  }
  text = text.replace(/[^\x20-\x7e]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * A JSON-RPC response whose id is none of the requests the runner has waiting: the SDK drops it ("unknown message ID")
 * and the call waited for its bound, reported as a timeout. The agent answered something else; the call is stopped.
 */
class StrayAnswer extends Error {
  constructor(id: unknown, waiting: readonly string[]) {
    const ours =
      waiting.length > 0
        ? ` (the runner was waiting for id ${waiting
            .slice(0, 3)
            .map((w) => quotedId(JSON.parse(w)))
            .join(', ')})`
        : '';
    super(
      `the agent answered another request id: its JSON-RPC response has id ${quotedId(id)}, which is not the id of any request the runner sent${ours}; the answer to this call never came, so the call was stopped and the session dropped`,
    );
    this.name = 'StrayAnswer';
  }
}

/** A JSON-RPC response (an id and a result or an error, no method). */
function isResponse(message: unknown): message is { id: unknown; error?: { code?: unknown; message?: unknown } } {
  return (
    !!message &&
    typeof message === 'object' &&
    !('method' in message) &&
    'id' in message &&
    ('result' in message || 'error' in message)
  );
}

/** Stops the connection's call in progress with a reason (the first one wins until the next call). */
export function stopCall(connection: WatchedSession, reason: CallStopped): void {
  if (connection.flood) return;
  connection.flood = reason;
  connection.onFlood?.(reason);
}

/**
 * Hooks the transport's `onmessage`, which the SDK's Protocol sets in `connect()` and through which it dispatches
 * every message — requests to its handlers, which answer them — so that past MAX_SERVER_REQUESTS_PER_CALL requests
 * (since the connection's current call began) a request never reaches the Protocol: it is neither answered nor kept.
 * An accessor on the transport instance, so the Protocol's own assignment is wrapped (no fork of the SDK).
 */
export function boundServerRequests<Message, SendOptions>(
  transport: { onmessage?: unknown; send: (message: Message, options?: SendOptions) => Promise<void> },
  connection: WatchedSession,
): void {
  let wrapped: ((message: unknown, extra?: unknown) => void) | undefined;
  // The ids of the requests the SDK sends: a response to any other id is the agent answering something else.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (isServerRequest(message)) connection.pending.add(JSON.stringify(message.id));
    return send(message, options);
  };
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => wrapped,
    set: (handler: ((message: unknown, extra?: unknown) => void) | undefined) => {
      wrapped = handler
        ? (message, extra) => {
            if (isServerRequest(message) && ++connection.serverRequests > MAX_SERVER_REQUESTS_PER_CALL) {
              stopCall(connection, new ServerRequestFlood(message.method));
              return;
            }
            if (isResponse(message)) {
              const id = JSON.stringify(message.id);
              if (id === undefined || !connection.pending.delete(id)) {
                stopCall(connection, new StrayAnswer(message.id, [...connection.pending]));
                return;
              }
              if (message.error && typeof message.error === 'object')
                connection.answeredError = { code: message.error.code, message: message.error.message };
            }
            handler(message, extra);
          }
        : undefined;
    },
  });
}

/** A JSON-RPC request (a method and an id), as opposed to a notification or a response. */
function isServerRequest(message: unknown): message is { method: unknown; id: unknown } {
  return (
    !!message && typeof message === 'object' && 'method' in message && (message as { id?: unknown }).id !== undefined
  );
}

/**
 * One call's watch on the bound: the count restarts, and a flood aborts the returned signal with the reason.
 * `end()` when the call is over.
 */
export function watchServerRequests(
  connection: WatchedSession,
  signal: AbortSignal,
): { signal: AbortSignal; flood: () => CallStopped | undefined; end: () => void } {
  const stop = new AbortController();
  connection.serverRequests = 0;
  connection.flood = undefined;
  connection.answeredError = undefined;
  const onFlood = (flood: CallStopped) => stop.abort(flood);
  connection.onFlood = onFlood;
  return {
    signal: AbortSignal.any([signal, stop.signal]),
    flood: () => (stop.signal.aborted ? (stop.signal.reason as CallStopped) : undefined),
    end: () => {
      if (connection.onFlood === onFlood) connection.onFlood = undefined;
    },
  };
}

export function floodOf(error: unknown): CallStopped | undefined {
  return error instanceof ServerRequestFlood || error instanceof StrayAnswer || error instanceof ResponseTooLargeError
    ? error
    : undefined;
}
