/**
 * MCP over Streamable HTTP through `@modelcontextprotocol/sdk`'s client, with
 * the response extraction of the runner output contract (> extraction):
 * structuredContent wins over content[].text; an `adcp_error` (or isError)
 * takes the error path; the path actually used is recorded.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isErrorOnly } from '../model/answer-error.js';
import type { Exchange } from '../model/exchange.js';
import type { ExtractionRecord, ResponseRecord } from '../model/records.js';
import { filterResponseHeaders } from '../model/redact.js';
import { jsonRpcErrorOf, parseJsonOrText, type JsonRpcError } from './answer-body.js';
import { boundedFetch, describeError, isTimeoutError, ResponseTooLargeError, type ObservedHttp } from './http.js';
import { agentOriginRedirects } from './url-guard.js';
import { authorizationHeader, type AgentTransport, type CallOptions, type Credentials } from './types.js';

export interface McpTransportOptions {
  url: string;
  maxResponseBytes: number;
  /** Client name/version announced in `initialize`. */
  clientInfo?: { name: string; version: string };
  /**
   * Sessions to take from and give back to instead of opening and closing one per transport: the storyboard runs
   * of one worker share theirs (see McpSessionPool). @default none: this transport's sessions are its own
   */
  sessions?: McpSessionPool;
}

interface Connection {
  client: Client;
  /** Status and headers of the latest HTTP response on this connection. */
  last?: ObservedHttp;
  /** The agent's tool names, listed once per session. */
  tools?: string[];
  /** Taken from a pool and not yet used by this transport: the agent may have ended the session meanwhile. */
  reused?: boolean;
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
type CallStopped = ServerRequestFlood | StrayAnswer | ResponseTooLargeError;

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
function stopCall(connection: Connection, reason: CallStopped): void {
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
function boundServerRequests(
  transport: { onmessage?: (message: any, extra?: any) => void; send: (message: any, options?: any) => Promise<void> },
  connection: Connection,
): void {
  let wrapped: ((message: any, extra?: any) => void) | undefined;
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
    set: (handler: ((message: any, extra?: any) => void) | undefined) => {
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
function watchServerRequests(
  connection: Connection,
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

/**
 * MCP sessions kept open between the storyboard runs of one process (a Vitest worker runs storyboard files one after
 * another), per agent URL, credential and bounds. A session costs three requests before the first call (initialize,
 * the initialized notification, tools/list) and the agent builds a server for each: over the corpus that was a third
 * of the requests and half of the agent's CPU time — the reference runner keeps its sessions too. A run takes a
 * session for itself (never two runs on one session), gives it back when it closes, and drops it on any transport
 * error. Nothing of a run lives in the session: context, captures and credentials are the run's own (engine/run.ts),
 * and a different credential is a different session.
 */
export class McpSessionPool {
  private readonly idle = new Map<string, Connection[]>();

  take(key: string): Connection | undefined {
    const list = this.idle.get(key);
    const connection = list?.pop();
    if (list && list.length === 0) this.idle.delete(key);
    if (connection) connection.reused = true;
    return connection;
  }

  give(key: string, connection: Connection): void {
    const list = this.idle.get(key) ?? [];
    list.push(connection);
    this.idle.set(key, list);
  }

  /** Closes every idle session (open ones close with their transport). */
  async close(): Promise<void> {
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.all(all.map((c) => c.client.close().catch(() => {})));
  }
}

/** The sessions the storyboard runs of this process share (open-run.ts). */
export const workerSessions = new McpSessionPool();

const CLIENT_INFO = { name: 'vitest-adcp', version: '0.1.0' };

interface McpSdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  McpError: typeof McpError;
  /** The tool-result schema calls are parsed with (keepStructuredContent). */
  resultSchema: typeof CallToolResultSchema;
}
let sdk: Promise<McpSdk> | undefined;
/** The SDK once imported (the call path needs it synchronously, after a connection has loaded it). */
let loadedSdk: McpSdk | undefined;

/**
 * The MCP SDK, imported on the first connection. It and zod under it take a quarter of a second to import, and the
 * package's entry point reaches this module — so a Vitest run's main process, which loads the plugin from that entry
 * point and never calls an agent (unless it selects storyboards by capabilities), paid it before starting a worker.
 */
function mcpSdk(): Promise<McpSdk> {
  sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([client, transport, types]) => {
    loadedSdk = {
      Client: client.Client,
      StreamableHTTPClientTransport: transport.StreamableHTTPClientTransport,
      McpError: types.McpError,
      resultSchema: keepStructuredContent(types.CallToolResultSchema) as unknown as typeof CallToolResultSchema,
    };
    return loadedSdk;
  });
  return sdk;
}

export class McpTransport implements AgentTransport {
  readonly kind = 'mcp' as const;
  readonly url: string;
  /**
   * One MCP session per distinct credential (steps may strip or swap credentials), with the pool key it goes back
   * under (its credential and the timeout its fetch was made with).
   */
  private readonly connections = new Map<string, { pending: Promise<Connection>; poolKey: string }>();

  constructor(private readonly options: McpTransportOptions) {
    this.url = options.url;
  }

  async call(task: string, payload: unknown, options: CallOptions): Promise<Exchange> {
    for (;;) {
      const { staleSession, ...exchange } = await this.callOnce(task, payload, options);
      // A pooled session this run had not used yet failed without an MCP answer: the agent may have ended it (MCP says
      // 404 to a request naming an ended session; many servers say 400), restarted, or closed the idle socket. That is
      // about our reuse, not an answer to the storyboard's call: the call goes out again on a fresh session, so the
      // step sees what it would have seen without the pool. Not after a timeout (the step's bound is spent). Each turn
      // drops one pooled session, so this ends.
      if (!staleSession) return exchange;
    }
  }

  private async callOnce(
    task: string,
    payload: unknown,
    options: CallOptions,
  ): Promise<Exchange & { staleSession?: true }> {
    const request = { transport: 'mcp' as const, operation: task, payload, url: this.url };
    const started = performance.now();
    const signal = options.signal
      ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)])
      : AbortSignal.timeout(options.timeoutMs);
    let connection: Connection | undefined;
    let reused = false;
    let watch: ReturnType<typeof watchServerRequests> | undefined;
    try {
      connection = await this.connect(options.credentials, options.timeoutMs, signal);
      connection.last = undefined;
      reused = connection.reused === true;
      connection.reused = false;
      watch = watchServerRequests(connection, signal);
      const result = await connection.client.callTool(
        { name: task, arguments: (payload ?? {}) as Record<string, unknown> },
        loadedSdk!.resultSchema,
        { timeout: options.timeoutMs, maxTotalTimeout: options.timeoutMs, signal: watch.signal },
      );
      const duration_ms = Math.round(performance.now() - started);
      const responsePayload = {
        isError: result.isError === true,
        structuredContent: result.structuredContent,
        content: result.content,
      };
      const { extraction, data } = extractMcpResult(responsePayload);
      return {
        request,
        response: this.responseRecord(responsePayload, connection.last, duration_ms),
        extraction,
        data,
      };
    } catch (error) {
      const duration_ms = Math.round(performance.now() - started);
      // Too many server→client requests (during this call, or during the session's initialize): the agent's doing, in
      // one line naming the bound, never retried on a fresh session.
      const flood = watch?.flood() ?? floodOf(error);
      if (flood) {
        this.forget(options.credentials);
        return {
          request,
          response: undefined,
          extraction: { path: 'none', note: 'no MCP result: transport error' },
          data: undefined,
          transportError: flood.message,
        };
      }
      // (No SDK loaded yet: the error came before any MCP exchange, so it is no McpError.) A -32000 or -32001 the agent
      // itself answered is its answer too, not the SDK's own "connection closed" / "timed out" of the same codes.
      if (
        loadedSdk &&
        error instanceof loadedSdk.McpError &&
        (!isTransportLevelMcpError(error) || agentAnswered(connection, error))
      ) {
        // The agent answered with a JSON-RPC error: that is an answer, on the error path.
        const rpcError = { code: error.code, message: error.message, data: error.data };
        return {
          request,
          response: this.responseRecord({ error: rpcError }, connection?.last, duration_ms),
          extraction: { path: 'error', note: 'JSON-RPC error response' },
          data: (error.data as unknown) ?? {},
          rpcError,
        };
      }
      // No MCP result: drop the connection so the next step starts clean.
      this.forget(options.credentials);
      const observed: ObservedHttp | undefined = connection?.last ?? (error as any)?.observed;
      if (reused && !isTimeoutError(error))
        return { request, response: undefined, extraction: { path: 'none' }, data: undefined, staleSession: true };
      const httpAnswer = observed ? jsonRpcErrorIn(observed) : undefined;
      if (observed && httpAnswer) {
        // An HTTP error status carrying a JSON-RPC error (e.g. 401 + adcp_error AUTH_REQUIRED) is the agent's answer.
        return {
          request,
          response: this.responseRecord(httpAnswer.body, observed, duration_ms),
          extraction: { path: 'error', note: `HTTP ${observed.status} with a JSON-RPC error body` },
          data: (httpAnswer.error.data as unknown) ?? {},
          rpcError: httpAnswer.error,
        };
      }
      if (observed && observed.status >= 400 && observed.status < 500) {
        // A 4xx before MCP (typically 401/403 from an auth layer) is the agent's answer to this call, not a transport failure.
        const body = observed.errorBody !== undefined ? parseJsonOrText(observed.errorBody) : undefined;
        return {
          request,
          response: this.responseRecord(body, observed, duration_ms),
          extraction: { path: 'error', note: `HTTP ${observed.status} without a JSON-RPC error body` },
          data:
            body && typeof body === 'object' && !Array.isArray(body) ? body : { message: `HTTP ${observed.status}` },
        };
      }
      return {
        request,
        response: observed
          ? this.responseRecord(
              observed.errorBody !== undefined ? parseJsonOrText(observed.errorBody) : undefined,
              observed,
              duration_ms,
            )
          : undefined,
        extraction: { path: 'none', note: 'no MCP result: transport error' },
        data: undefined,
        transportError: describeTransportError(error, observed, options.timeoutMs),
      };
    } finally {
      watch?.end();
    }
  }

  async listTools(options: CallOptions): Promise<{ tools: string[] } | { error: string }> {
    const signal = options.signal
      ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)])
      : AbortSignal.timeout(options.timeoutMs);
    let watch: ReturnType<typeof watchServerRequests> | undefined;
    try {
      const connection = await this.connect(options.credentials, options.timeoutMs, signal);
      if (connection.tools) return { tools: [...connection.tools] };
      watch = watchServerRequests(connection, signal);
      const tools: string[] = [];
      let cursor: string | undefined;
      // Bounded: a hostile agent could page forever.
      for (let page = 0; page < 50; page++) {
        const listed = await connection.client.listTools(cursor ? { cursor } : undefined, {
          timeout: options.timeoutMs,
          signal: watch.signal,
        });
        tools.push(...listed.tools.map((t) => t.name));
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      connection.tools = tools;
      return { tools: [...tools] };
    } catch (error) {
      this.forget(options.credentials);
      const flood = watch?.flood() ?? floodOf(error);
      return { error: flood ? flood.message : describeTransportError(error, undefined, options.timeoutMs) };
    } finally {
      watch?.end();
    }
  }

  private responseRecord(payload: unknown, observed: ObservedHttp | undefined, duration_ms: number): ResponseRecord {
    return {
      transport: 'mcp',
      payload,
      ...(observed ? { status: observed.status, headers: filterResponseHeaders(observed.headers) } : {}),
      duration_ms,
    };
  }

  private key(credentials: Credentials): string {
    return authorizationHeader(credentials) ?? '';
  }

  /** What a pooled session must share with this transport's: the agent, the credential and the bounds its fetch has. */
  private poolKey(credentials: Credentials, timeoutMs: number): string {
    return JSON.stringify([
      this.url,
      this.options.maxResponseBytes,
      timeoutMs,
      this.options.clientInfo ?? CLIENT_INFO,
      this.key(credentials),
    ]);
  }

  private forget(credentials: Credentials): void {
    const key = this.key(credentials);
    const entry = this.connections.get(key);
    this.connections.delete(key);
    entry?.pending.then((c) => c.client.close()).catch(() => {});
  }

  private connect(credentials: Credentials, timeoutMs: number, signal: AbortSignal): Promise<Connection> {
    const key = this.key(credentials);
    const existing = this.connections.get(key);
    if (existing) return existing.pending;
    const poolKey = this.poolKey(credentials, timeoutMs);
    const pooled = this.options.sessions?.take(poolKey);
    const pending = pooled ? Promise.resolve(pooled) : this.open(credentials, timeoutMs, signal);
    this.connections.set(key, { pending, poolKey });
    pending.catch(() => this.connections.delete(key));
    return pending;
  }

  private async open(credentials: Credentials, timeoutMs: number, signal: AbortSignal): Promise<Connection> {
    const connection = { serverRequests: 0, pending: new Set<string>() } as unknown as Connection;
    const authorization = authorizationHeader(credentials);
    const { Client, StreamableHTTPClientTransport } = await mcpSdk();
    const transport = new StreamableHTTPClientTransport(new URL(this.url), {
      requestInit: authorization ? { headers: { authorization } } : undefined,
      // Redirects stay on the agent's origin (url-guard.ts): a Location is agent-supplied.
      fetch: agentOriginRedirects(
        boundedFetch({
          timeoutMs,
          maxResponseBytes: this.options.maxResponseBytes,
          // Only the POSTs carry our calls; the GET (server-sent events) and
          // DELETE (session end) the client opens on its own are not answers.
          onResponse: (observed) => {
            if (observed.method === 'POST') connection.last = observed;
          },
          // A body over the bound in a stream the SDK reads itself (server-sent events) ends in the SDK's own error
          // handler, and the call waited for its timeout: stop the call with the bound's reason instead.
          onTooLarge: (error) => stopCall(connection, error),
        }),
        this.url,
      ) as any,
      // A runner must not retry silently: one request, one observation.
      reconnectionOptions: {
        maxReconnectionDelay: 0,
        initialReconnectionDelay: 0,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 0,
      },
    });
    boundServerRequests(transport, connection);
    const client = new Client(this.options.clientInfo ?? CLIENT_INFO, { capabilities: {} });
    connection.client = client;
    // The initialize exchange is bounded like a call.
    const watch = watchServerRequests(connection, signal);
    try {
      await client.connect(transport, { timeout: timeoutMs, signal: watch.signal });
    } catch (error) {
      await client.close().catch(() => {});
      const flood = watch.flood();
      const thrown = flood ?? error;
      if (thrown && typeof thrown === 'object' && connection.last) (thrown as any).observed = connection.last;
      throw thrown;
    } finally {
      watch.end();
    }
    return connection;
  }

  async close(): Promise<void> {
    const entries = [...this.connections.values()];
    this.connections.clear();
    const sessions = this.options.sessions;
    await Promise.all(
      entries.map(({ pending, poolKey }) =>
        pending.then(
          (c) => (sessions ? sessions.give(poolKey, c) : c.client.close()),
          () => {},
        ),
      ),
    );
  }
}

/**
 * The SDK's tool-result schema, except that a valid `structuredContent` is kept as the agent sent it: the schema's
 * `z.record` rebuilds the object by assignment, so an agent's JSON key `"__proto__"` (plain data after JSON.parse)
 * became the copy's prototype and vanished from the answer, its checks and its record. The SDK accepts any schema
 * with a Zod 3 style `safeParse` (its zod-compat layer), which is what this is.
 */
const keepStructuredContent = (
  CallToolResultSchema: typeof import('@modelcontextprotocol/sdk/types.js').CallToolResultSchema,
) => ({
  safeParse(data: unknown) {
    const checked = CallToolResultSchema.safeParse(data);
    if (!checked.success || checked.data.structuredContent === undefined) return checked;
    return {
      success: true as const,
      data: {
        ...checked.data,
        structuredContent: (data as { structuredContent: Record<string, unknown> }).structuredContent,
      },
    };
  },
});

function floodOf(error: unknown): CallStopped | undefined {
  return error instanceof ServerRequestFlood || error instanceof StrayAnswer || error instanceof ResponseTooLargeError
    ? error
    : undefined;
}

function jsonRpcErrorIn(observed: ObservedHttp): { body: unknown; error: JsonRpcError } | undefined {
  if (observed.status < 400 || observed.errorBody === undefined) return undefined;
  const body = parseJsonOrText(observed.errorBody);
  const error = jsonRpcErrorOf(body);
  return error ? { body, error } : undefined;
}

/** The agent answered the current call's request with this very JSON-RPC error (code and message). */
function agentAnswered(connection: Connection | undefined, error: McpError): boolean {
  const answered = connection?.answeredError;
  return (
    !!answered &&
    answered.code === error.code &&
    typeof answered.message === 'string' &&
    error.message.endsWith(answered.message)
  );
}

/** Timeouts and connection losses surface as McpError too; they are not agent answers. */
function isTransportLevelMcpError(error: McpError): boolean {
  // -32001 RequestTimeout, -32000 ConnectionClosed (ErrorCode in the MCP SDK).
  return error.code === -32001 || error.code === -32000;
}

function describeTransportError(error: unknown, observed: ObservedHttp | undefined, timeoutMs: number): string {
  const message = describeError(error);
  if (isTimeoutError(error)) {
    return `no answer within ${timeoutMs} ms (${message}); raise the step timeout (option timeoutMs) if the agent is just slow`;
  }
  if (observed && observed.status >= 400) return `HTTP ${observed.status} from the agent: ${message}`;
  return message;
}

/**
 * The contract's MCP extraction: structuredContent when it is an object;
 * otherwise the first text content that parses as a JSON object; an error
 * envelope (`adcp_error`, or `isError: true`) takes the error path.
 */
export function extractMcpResult(result: { isError?: boolean; structuredContent?: unknown; content?: unknown }): {
  extraction: ExtractionRecord;
  data: unknown;
} {
  const structured = result.structuredContent;
  if (structured && typeof structured === 'object' && !Array.isArray(structured)) {
    const record = structured as Record<string, unknown>;
    if (result.isError || isErrorOnly(record)) {
      return {
        extraction: {
          path: 'error',
          note: result.isError
            ? 'isError: true with structuredContent'
            : 'structuredContent contained only adcp_error — treated as error',
        },
        data: structured,
      };
    }
    return { extraction: { path: 'structured_content' }, data: structured };
  }
  const texts = Array.isArray(result.content)
    ? result.content.filter((c: any) => c?.type === 'text' && typeof c.text === 'string')
    : [];
  for (const item of texts as { text: string }[]) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(item.text);
    } catch {
      continue;
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const record = parsed as Record<string, unknown>;
      if (result.isError || isErrorOnly(record)) {
        return {
          extraction: { path: 'error', note: 'error envelope in content[].text (no structuredContent)' },
          data: parsed,
        };
      }
      return {
        extraction: { path: 'text_fallback', note: 'no structuredContent; parsed JSON from content[].text' },
        data: parsed,
      };
    }
  }
  if (result.isError) {
    const message = (texts as { text: string }[]).map((t) => t.text).join('\n');
    return { extraction: { path: 'error', note: 'isError: true without a JSON body' }, data: { message } };
  }
  return { extraction: { path: 'none', note: 'neither structuredContent nor JSON text content' }, data: undefined };
}
