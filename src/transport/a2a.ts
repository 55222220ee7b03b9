/**
 * A2A (JSON-RPC over HTTP, A2A 0.3 wire format) with the response extraction
 * of the runner output contract, so an A2A agent is graded exactly as an MCP
 * one: the same `Exchange` (request, response, extraction path, task data,
 * JSON-RPC error), the same bounds, the same credentials per call.
 *
 * - Discovery: the agent card at `<url>/.well-known/agent-card.json` (A2A
 *   0.3), then the older `agent.json`, then the same two at the origin root;
 *   its `url` is the JSON-RPC endpoint and its `skills[].id` are the tools
 *   (`missing_tool` is graded from them, as from MCP `tools/list`).
 * - A call is `message/send` with one DataPart `{ skill, parameters }` (AdCP
 *   3.0 a2a-guide; `{ skill, input }` when the card declares the AdCP A2A
 *   profile extension). An A2A task still `submitted`/`working` without an
 *   AdCP async handle is polled with A2A `tasks/get` within the step's time.
 * - Extraction (a2a-response-extraction.mdx): final states read the last
 *   DataPart of `artifacts[0].parts[]` (falling back to `status.message`),
 *   interim states the first DataPart of `status.message.parts[]`; a failed,
 *   rejected or canceled task is an error answer (transport-errors.mdx > A2A
 *   Binding), a JSON-RPC error too, with its `data` as the task data.
 *
 * JSON-RPC over undici (boundedFetch) rather than `@a2a-js/sdk`'s client: every
 * request bounded in time and size by the same code as MCP, the credential
 * set per request (no client cached per token), and the raw Task, HTTP status,
 * headers and error bodies kept for the record and the HTTP checks.
 */
import { randomUUID } from 'node:crypto';
import type { Exchange } from '../model/exchange.js';
import type { RequestRecord, ResponseRecord } from '../model/records.js';
import { filterResponseHeaders } from '../model/redact.js';
import { ADCP_A2A_EXTENSION, discoverAgent, type Discovered } from './a2a-card.js';
import { extractA2aResult } from './a2a-extract.js';
import { otherTask, runningTask } from './a2a-poll.js';
import { jsonRpcErrorOf, parseJsonOrText } from './answer-body.js';
import { describeTransportError, openCallScope } from './call.js';
import { boundedFetch, type ObservedHttp } from './http.js';
import type { UrlGuardOptions } from './url-guard.js';
import { authorizationHeader, type AgentTransport, type CallOptions, type Credentials } from './types.js';

export interface A2aTransportOptions {
  /** The agent's A2A base URL (where its agent card is), or the card's own URL. */
  url: string;
  maxResponseBytes: number;
  /** The SSRF guard on an endpoint the card names off the agent's origin: allowHttp (local development); tests' lookup / dial. */
  urlGuard?: Omit<UrlGuardOptions, 'agentUrl'>;
}

export class A2aTransport implements AgentTransport {
  readonly kind = 'a2a' as const;
  readonly url: string;
  private discovered?: Promise<Discovered>;

  constructor(private readonly options: A2aTransportOptions) {
    this.url = options.url;
  }

  async call(task: string, payload: unknown, options: CallOptions): Promise<Exchange> {
    const scope = openCallScope(options);
    try {
      return await this.callWithin(task, payload, options, scope.signal);
    } finally {
      // Nothing of the call outlives it: its timer, its listener on the caller's signal (call.ts).
      scope.end();
    }
  }

  private async callWithin(
    task: string,
    payload: unknown,
    options: CallOptions,
    signal: AbortSignal,
  ): Promise<Exchange> {
    const started = performance.now();
    const request: RequestRecord = { transport: 'a2a', operation: task, payload, url: this.url };
    const remaining = () => Math.max(1, Math.ceil(options.timeoutMs - (performance.now() - started)));
    const elapsed = () => Math.round(performance.now() - started);

    let discovered: Discovered;
    try {
      discovered = await this.discover(remaining(), signal);
    } catch (error) {
      return {
        request,
        extraction: { path: 'none', note: 'no A2A answer: agent card discovery failed' },
        data: undefined,
        transportError: describeTransportError(error, undefined, options.timeoutMs, 'reading the agent card'),
      };
    }
    if (discovered.refused)
      return {
        request,
        extraction: { path: 'none', note: 'not sent' },
        data: undefined,
        transportError: discovered.refused,
      };
    request.url = discovered.endpoint;

    const params = messageSendParams(task, payload, discovered.invocation, options.a2aContextId);
    const headers = discovered.invocation === 'input' ? { 'a2a-extensions': ADCP_A2A_EXTENSION } : undefined;
    const sent = await this.rpc(discovered, 'message/send', params, options.credentials, remaining(), signal, headers);
    const polling: Polling = { discovered, options, signal, headers, started, remaining };
    const { answer, polls } = await this.pollWhileRunning(sent, polling);
    return this.toExchange(request, answer, elapsed(), options.timeoutMs, polls);
  }

  /**
   * An A2A task still at work (no AdCP async handle to follow instead): the call is not over — poll A2A tasks/get
   * until the task is no longer running, or the step's time is spent (the answer then says it was still running).
   */
  private async pollWhileRunning(sent: RpcAnswer, polling: Polling): Promise<{ answer: RpcAnswer; polls: number }> {
    const { options, signal, started } = polling;
    let answer = sent;
    let polls = 0;
    /** The context of the task being polled, once an answer has named one. */
    let contextId: string | undefined;
    for (;;) {
      if (answer.kind !== 'result') break;
      const task = runningTask(answer.result);
      if (!task) break;
      contextId ??= task.contextId;
      const stillRunning = { ...answer, stillRunning: { state: task.state, polls } };
      const left = options.timeoutMs - (performance.now() - started);
      if (left <= 1) return { answer: stillRunning, polls };
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** polls, Math.max(0, left - 1))));
      if (signal.aborted) return { answer: stillRunning, polls };
      const next = await this.pollTask(task.id, polling);
      polls++;
      // A poll cut by the step's deadline — the call's signal, or the poll's own timeout set to what was left, whichever
      // timer fired first — means the task did not finish in time, not that polling broke.
      if (next.kind === 'failure' && (signal.aborted || performance.now() - started >= options.timeoutMs - 1))
        return { answer: { ...answer, stillRunning: { state: task.state, polls } }, polls };
      // The answer must be the task asked for: another task's answer (its id, or another context) is not this call's.
      const mismatch = next.kind === 'result' ? otherTask(task.id, contextId, next.result) : undefined;
      if (next.kind === 'result' && mismatch)
        return { answer: { kind: 'other-task', body: next.result, problem: mismatch, observed: next.observed }, polls };
      answer = next;
    }
    return { answer, polls };
  }

  /** One A2A tasks/get for the task being polled. */
  private pollTask(id: string, polling: Polling): Promise<RpcAnswer> {
    const { discovered, options, signal, headers, remaining } = polling;
    return this.rpc(discovered, 'tasks/get', { id }, options.credentials, remaining(), signal, headers);
  }

  async listTools(options: CallOptions): Promise<{ tools: string[] } | { error: string }> {
    const scope = openCallScope(options);
    try {
      return (await this.discover(options.timeoutMs, scope.signal)).skills;
    } catch (error) {
      return { error: describeTransportError(error, undefined, options.timeoutMs, 'reading the agent card') };
    } finally {
      scope.end();
    }
  }

  async close(): Promise<void> {
    // Requests go through the shared, bounded undici pool — or, for an endpoint off the agent's origin, its pinned one.
    const discovered = await this.discovered?.catch(() => undefined);
    await discovered?.dispatcher?.close().catch(() => {});
  }

  private discover(timeoutMs: number, signal: AbortSignal): Promise<Discovered> {
    if (!this.discovered) {
      const pending = discoverAgent(this.url, timeoutMs, this.options.maxResponseBytes, signal, {
        ...this.options.urlGuard,
        agentUrl: this.url,
      });
      this.discovered = pending;
      // A failed discovery (timeout, refused connection) is retried by the next call.
      pending.catch(() => {
        if (this.discovered === pending) this.discovered = undefined;
      });
    }
    return this.discovered;
  }

  /** One JSON-RPC request, bounded; never throws. */
  private async rpc(
    to: Discovered,
    method: string,
    params: unknown,
    credentials: Credentials,
    timeoutMs: number,
    signal: AbortSignal,
    extraHeaders?: Record<string, string>,
  ): Promise<RpcAnswer> {
    const id = randomUUID();
    const endpoint = to.endpoint;
    let observed: ObservedHttp | undefined;
    const fetch = boundedFetch({
      timeoutMs,
      maxResponseBytes: this.options.maxResponseBytes,
      onResponse: (o) => (observed = o),
      ...(to.dispatcher ? { dispatcher: to.dispatcher } : {}),
    });
    const authorization = authorizationHeader(credentials);
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(authorization ? { authorization } : {}),
          ...extraHeaders,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal,
        redirect: 'manual',
      });
      const text = await response.text();
      return parseRpc(text, id, observed!);
    } catch (error) {
      return { kind: 'failure', error, observed };
    }
  }

  private toExchange(
    request: RequestRecord,
    answer: RpcAnswer,
    duration_ms: number,
    timeoutMs: number,
    polls: number,
  ): Exchange {
    const record = (payload: unknown, observed: ObservedHttp | undefined, state?: string): ResponseRecord => ({
      transport: 'a2a',
      payload,
      ...(observed ? { status: observed.status, headers: filterResponseHeaders(observed.headers) } : {}),
      duration_ms,
      ...(state ? { task_state: state } : {}),
    });
    const pollNote = polls > 0 ? ` after ${polls} A2A tasks/get poll(s)` : '';
    switch (answer.kind) {
      case 'failure': {
        const observed = answer.observed;
        return {
          request,
          ...(observed
            ? {
                response: record(
                  observed.errorBody !== undefined ? parseJsonOrText(observed.errorBody) : undefined,
                  observed,
                ),
              }
            : {}),
          extraction: { path: 'none', note: 'no A2A answer: transport error' },
          data: undefined,
          transportError: describeTransportError(answer.error, observed, timeoutMs),
        };
      }
      case 'http-error': {
        const { observed, body } = answer;
        const rpcError = jsonRpcErrorOf(body);
        if (rpcError) {
          // An HTTP error status carrying a JSON-RPC error (401 + adcp_error AUTH_REQUIRED) is the agent's answer.
          return {
            request,
            response: record(body, observed),
            extraction: { path: 'error', note: `HTTP ${observed.status} with a JSON-RPC error body` },
            data: rpcError.data ?? {},
            rpcError,
          };
        }
        if (observed.status < 500) {
          // A 4xx before A2A (an auth layer's 401/403) is the agent's answer to this call, not a transport failure.
          return {
            request,
            response: record(body, observed),
            extraction: { path: 'error', note: `HTTP ${observed.status} without a JSON-RPC error body` },
            data:
              body && typeof body === 'object' && !Array.isArray(body) ? body : { message: `HTTP ${observed.status}` },
          };
        }
        return {
          request,
          response: record(body, observed),
          extraction: { path: 'none', note: 'no A2A answer: HTTP error' },
          data: undefined,
          transportError: `HTTP ${observed.status} from the agent`,
        };
      }
      case 'other-task':
        return {
          request,
          response: record(answer.body, answer.observed),
          extraction: { path: 'none', note: `no A2A answer: A2A tasks/get answered another task${pollNote}` },
          data: undefined,
          transportError: answer.problem,
        };
      case 'not-json-rpc':
        return {
          request,
          response: record(answer.body, answer.observed),
          extraction: { path: 'none', note: 'no A2A answer: not a JSON-RPC response' },
          data: undefined,
          transportError: answer.problem,
        };
      case 'rpc-error': {
        const rpcError = answer.error;
        return {
          request,
          response: record({ error: rpcError }, answer.observed),
          extraction: { path: 'error', note: `JSON-RPC error response${pollNote}` },
          data: rpcError.data ?? {},
          rpcError,
        };
      }
      case 'result': {
        const extracted = extractA2aResult(answer.result);
        let note = extracted.extraction.note;
        if (answer.stillRunning) {
          note = `the A2A task was still ${answer.stillRunning.state} when the step timeout ran out (${answer.stillRunning.polls} A2A tasks/get poll(s)); ${note}`;
        } else if (pollNote) note = `${note}${pollNote}`;
        return {
          request,
          response: record(answer.result, answer.observed, extracted.state),
          extraction: { ...extracted.extraction, ...(note ? { note } : {}) },
          data: extracted.data,
        };
      }
    }
  }
}

/** What polling a call's A2A task needs of the call: where to send, its options, signal, headers and start time. */
interface Polling {
  discovered: Discovered;
  options: CallOptions;
  signal: AbortSignal;
  headers: Record<string, string> | undefined;
  started: number;
  /** The call's time left, in whole milliseconds (at least 1). */
  remaining: () => number;
}

/**
 * A2A `message/send` params: one DataPart `{ skill, parameters }` (AdCP 3.0 a2a-guide), or `{ skill, input }` when
 * the card declares the AdCP A2A profile extension.
 */
function messageSendParams(task: string, payload: unknown, invocation: Discovered['invocation'], contextId?: string) {
  const messageId = randomUUID();
  return {
    message: {
      kind: 'message',
      messageId,
      ...(contextId ? { contextId } : {}),
      role: 'user',
      parts: [{ kind: 'data', data: { skill: task, [invocation]: payload ?? {} } }],
    },
    configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
  };
}

type RpcAnswer =
  | { kind: 'result'; result: unknown; observed: ObservedHttp; stillRunning?: { state: string; polls: number } }
  | { kind: 'rpc-error'; error: { code: number; message: string; data?: unknown }; observed: ObservedHttp }
  | { kind: 'http-error'; body: unknown; observed: ObservedHttp }
  | { kind: 'not-json-rpc'; body: unknown; problem: string; observed: ObservedHttp }
  | { kind: 'other-task'; body: unknown; problem: string; observed: ObservedHttp }
  | { kind: 'failure'; error: unknown; observed?: ObservedHttp };

function parseRpc(text: string, id: string, observed: ObservedHttp): RpcAnswer {
  if (observed.status >= 400)
    return { kind: 'http-error', body: parseJsonOrText(observed.errorBody ?? text), observed };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const type = observed.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    return {
      kind: 'not-json-rpc',
      body: text.slice(0, 2000),
      problem: `the agent's answer is not JSON (HTTP ${observed.status}${type ? `, content-type ${type}` : ''})`,
      observed,
    };
  }
  const error = jsonRpcErrorOf(body);
  if (error) return { kind: 'rpc-error', error, observed };
  if (!body || typeof body !== 'object' || Array.isArray(body) || !('result' in body)) {
    // An "error" that is not an error object (`"error": "boom"`, `null`) is named as such, not as missing.
    const why =
      body && typeof body === 'object' && 'error' in body
        ? 'its "error" is not an object with a numeric "code"'
        : 'no "result" or "error"';
    return {
      kind: 'not-json-rpc',
      body,
      problem: `the agent's answer is not a JSON-RPC response (HTTP ${observed.status}: ${why})`,
      observed,
    };
  }
  const response = body as { id?: unknown; result: unknown };
  if (response.id !== id)
    return {
      kind: 'not-json-rpc',
      body,
      problem: `the agent answered another JSON-RPC request (id ${JSON.stringify(response.id)?.slice(0, 80)}, sent ${id})`,
      observed,
    };
  return { kind: 'result', result: response.result, observed };
}
