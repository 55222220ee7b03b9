/**
 * MCP over Streamable HTTP through `@modelcontextprotocol/sdk`'s client, with
 * the response extraction of the runner output contract (> extraction):
 * structuredContent wins over content[].text; an `adcp_error` (or isError)
 * takes the error path; the path actually used is recorded.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Exchange } from '../model/exchange.js';
import type { ResponseRecord } from '../model/records.js';
import { ownVersion } from '../model/package-version.js';
import { filterResponseHeaders } from '../model/redact.js';
import { jsonRpcErrorOf, parseJsonOrText, type JsonRpcError } from './answer-body.js';
import { OutputSchemas, SchemaChecks } from './mcp-output-schema.js';
import { extractMcpResult } from './mcp-extract.js';
import { describeTransportError, openCallScope } from './call.js';
import { boundedFetch, isTimeoutError, type ObservedHttp } from './http.js';
import {
  boundServerRequests,
  floodOf,
  stopCall,
  watchServerRequests,
  type WatchedSession,
} from './mcp-server-requests.js';
import { agentOriginRedirects } from './url-guard.js';
import { authorizationHeader, type AgentTransport, type CallOptions, type Credentials } from './types.js';

// The bound on server-to-client requests lives in mcp-server-requests.ts; it stays importable from here.

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

/** An MCP session, with what the runner watches of the agent's requests and answers on it (mcp-server-requests.ts). */
interface Connection extends WatchedSession {
  client: Client;
  /** Status and headers of the latest HTTP response on this connection. */
  last?: ObservedHttp;
  /** The agent's tool names, listed once per session. */
  tools?: string[];
  /** The output schemas its tools declare (tools/list), which an MCP client holds their results to. */
  outputSchemas: OutputSchemas;
  /** Taken from a pool and not yet used by this transport: the agent may have ended the session meanwhile. */
  reused?: boolean;
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

/** Who we are in MCP's `initialize`: this package and its version (an agent's logs name the runner that called). */
const CLIENT_INFO = { name: 'vitest-adcp', version: ownVersion() };

interface McpSdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  McpError: typeof McpError;
  /** The tool-result schema calls are parsed with (keepStructuredContent). */
  resultSchema: typeof CallToolResultSchema;
  AjvJsonSchemaValidator: typeof import('@modelcontextprotocol/sdk/validation/ajv').AjvJsonSchemaValidator;
}
let sdk: Promise<McpSdk> | undefined;
/** The declared output schemas compiled, for every session of the process (mcp-output-schema.ts). */
let outputSchemaChecks: SchemaChecks | undefined;
/** The SDK once imported (the call path needs it synchronously, after a connection has loaded it). */
let loadedSdk: McpSdk | undefined;

/**
 * Before a call's clock starts (its timeout signal, its duration): the SDK import is our cost, not the agent's. It
 * used to run inside the first call's bound, so on a loaded machine a fresh worker's first call could spend its whole
 * timeout importing and be reported as the agent's "no answer within … ms" (issue 31 item 10: url-guard.test.ts's
 * redirect test timed out so). A failed import is left to the connection, which reports it as before.
 */
async function sdkLoaded(): Promise<void> {
  await mcpSdk().catch(() => {});
}

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
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]).then(([client, transport, types, ajv]) => {
    loadedSdk = {
      Client: client.Client,
      StreamableHTTPClientTransport: transport.StreamableHTTPClientTransport,
      McpError: types.McpError,
      resultSchema: keepStructuredContent(types.CallToolResultSchema) as unknown as typeof CallToolResultSchema,
      AjvJsonSchemaValidator: ajv.AjvJsonSchemaValidator,
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
    await sdkLoaded();
    const started = performance.now();
    const scope = openCallScope(options);
    const failed: FailedCall = { request, options, started, reused: false };
    try {
      const connection = await this.connect(options.credentials, options.timeoutMs, scope.signal);
      failed.connection = connection;
      connection.last = undefined;
      failed.reused = connection.reused === true;
      connection.reused = false;
      failed.watch = watchServerRequests(connection, scope.signal);
      // Not the SDK's callTool: it throws a JSON-RPC error of its own for a result its tool's outputSchema refuses,
      // which would be recorded as the agent's answer (mcp-output-schema.ts).
      const result = await connection.client.request(
        { method: 'tools/call', params: { name: task, arguments: (payload ?? {}) as Record<string, unknown> } },
        loadedSdk!.resultSchema,
        { timeout: options.timeoutMs, maxTotalTimeout: options.timeoutMs, signal: failed.watch.signal },
      );
      const duration_ms = Math.round(performance.now() - started);
      const responsePayload = {
        isError: result.isError === true,
        structuredContent: result.structuredContent,
        content: result.content,
      };
      const { extraction, data } = extractMcpResult(responsePayload);
      const refused = connection.outputSchemas.refusal(task, result);
      return {
        request,
        response: this.responseRecord(responsePayload, connection.last, duration_ms),
        extraction,
        data,
        ...(refused ? { transportError: refused } : {}),
      };
    } catch (error) {
      return this.callFailed(error, failed, Math.round(performance.now() - started));
    } finally {
      failed.watch?.end();
      // The SDK keeps its abort listener on the request's signal: it must not abort now that the call is over.
      scope.end();
    }
  }

  /** The exchange of a call that threw: the agent's answer when it gave one (a JSON-RPC error, an HTTP 4xx), else a transport error. */
  private callFailed(error: unknown, failed: FailedCall, duration_ms: number): Exchange & { staleSession?: true } {
    const { request, options, connection } = failed;
    // Too many server→client requests (during this call, or during the session's initialize): the agent's doing, in
    // one line naming the bound, never retried on a fresh session.
    const flood = failed.watch?.flood() ?? floodOf(error);
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
    if (isAgentRpcError(error, connection)) {
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
    const observed: ObservedHttp | undefined =
      connection?.last ?? (error as { observed?: ObservedHttp } | null | undefined)?.observed;
    if (failed.reused && !isTimeoutError(error))
      return { request, response: undefined, extraction: { path: 'none' }, data: undefined, staleSession: true };
    return this.noMcpResult(error, failed, observed, duration_ms);
  }

  /** A call without an MCP result: an HTTP error status is still the agent's answer when it is a JSON-RPC error or a 4xx. */
  private noMcpResult(
    error: unknown,
    { request, options }: FailedCall,
    observed: ObservedHttp | undefined,
    duration_ms: number,
  ): Exchange {
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
        data: body && typeof body === 'object' && !Array.isArray(body) ? body : { message: `HTTP ${observed.status}` },
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
  }

  async listTools(options: CallOptions): Promise<{ tools: string[] } | { error: string }> {
    await sdkLoaded();
    const scope = openCallScope(options);
    let watch: ReturnType<typeof watchServerRequests> | undefined;
    try {
      const connection = await this.connect(options.credentials, options.timeoutMs, scope.signal);
      if (connection.tools) return { tools: [...connection.tools] };
      watch = watchServerRequests(connection, scope.signal);
      const tools: string[] = [];
      let cursor: string | undefined;
      // Bounded: a hostile agent could page forever.
      for (let page = 0; page < 50; page++) {
        const listed = await connection.client.listTools(cursor ? { cursor } : undefined, {
          timeout: options.timeoutMs,
          signal: watch.signal,
        });
        tools.push(...listed.tools.map((t) => t.name));
        connection.outputSchemas.listed(listed.tools);
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
      scope.end();
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
    const { Client, StreamableHTTPClientTransport, AjvJsonSchemaValidator } = await mcpSdk();
    const connection = {
      serverRequests: 0,
      pending: new Set<string>(),
      outputSchemas: new OutputSchemas((outputSchemaChecks ??= new SchemaChecks(() => new AjvJsonSchemaValidator()))),
    } as unknown as Connection;
    const authorization = authorizationHeader(credentials);
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
      ) as unknown as typeof fetch,
      // A runner must not retry silently: one request, one observation.
      reconnectionOptions: {
        maxReconnectionDelay: 0,
        initialReconnectionDelay: 0,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 0,
      },
    });
    boundServerRequests(transport, connection);
    const client = new Client(this.options.clientInfo ?? CLIENT_INFO, {
      capabilities: {},
      jsonSchemaValidator: OutputSchemas.forClient(),
    });
    connection.client = client;
    // The initialize exchange is bounded like a call.
    const watch = watchServerRequests(connection, signal);
    try {
      await client.connect(transport, { timeout: timeoutMs, signal: watch.signal });
    } catch (error) {
      await client.close().catch(() => {});
      const flood = watch.flood();
      const thrown = flood ?? error;
      if (thrown && typeof thrown === 'object' && connection.last)
        (thrown as { observed?: ObservedHttp }).observed = connection.last;
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

/** What a failed call knows: its request and options, when it began, and how far it got (its session, its watch). */
interface FailedCall {
  request: Exchange['request'];
  options: CallOptions;
  started: number;
  connection?: Connection;
  /** The session came from the pool and this transport had not used it yet. */
  reused: boolean;
  watch?: ReturnType<typeof watchServerRequests>;
}

/**
 * A JSON-RPC error the agent answered: an McpError that is not the SDK's own timeout or connection loss — a -32000 or
 * -32001 the agent itself answered is its answer too, not the SDK's own "connection closed" / "timed out" of the same
 * codes. (No SDK loaded yet: the error came before any MCP exchange, so it is no McpError.)
 */
function isAgentRpcError(error: unknown, connection: Connection | undefined): error is McpError {
  return (
    !!loadedSdk &&
    error instanceof loadedSdk.McpError &&
    (!isTransportLevelMcpError(error) || agentAnswered(connection, error))
  );
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
