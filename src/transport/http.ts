/**
 * HTTP plumbing shared by the transports: a `fetch` that bounds time and size,
 * and remembers the status and headers of the last response so a failed call
 * can still report what the agent said (401 + WWW-Authenticate).
 *
 * It is built on undici's `request`, not its `fetch`: the per-step CPU of a run
 * (bench/overhead.mjs) went a third to `fetch`'s web-stream plumbing on both
 * sides of every request; `request` writes the body as a buffer and hands back
 * a Node stream, and only the response body is wrapped as a web stream for the
 * callers that take a `Response` (the MCP client reads SSE from it). What
 * `fetch` did for us is done here: content-encoding is decoded with Node's
 * zlib, as `fetch` decodes it (undici's own `decompress` interceptor prints an
 * ExperimentalWarning in every worker); the size limit counts decoded bytes;
 * null-body statuses get a null body. Redirects are never followed (every caller asks
 * for `redirect: 'manual'` and decides itself: url-guard.ts).
 */
import { pipeline, Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { undici, type Agent, type Dispatcher, type Undici } from '../model/undici.js';

export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(
      `the agent's response exceeded ${limit} bytes; the runner stopped reading it (limit: option maxResponseBytes)`,
    );
    this.name = 'ResponseTooLargeError';
  }
}

export interface ObservedHttp {
  status: number;
  headers: [string, string][];
  url: string;
  method: string;
  /** The body of an HTTP error response (4xx/5xx), read (bounded) so the runner can report what the agent said. */
  errorBody?: string;
}

export interface BoundedFetchOptions {
  /** Per HTTP request: the whole exchange, headers and body, must finish within this. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** Called with every response's status and headers as soon as they arrive. */
  onResponse?: (observed: ObservedHttp) => void;
  /**
   * Called when a streamed body goes over maxResponseBytes, besides the error its reader gets: a reader that keeps its
   * errors to itself (the MCP SDK's server-sent-events reader) would otherwise leave the call waiting for its timeout.
   */
  onTooLarge?: (error: ResponseTooLargeError) => void;
  /** Where connections come from (url-guard.ts pins one to a vetted address). @default the shared pool */
  dispatcher?: Dispatcher;
}

/** One connection pool for the process (this fetch and raw-http.ts); per-request timeouts come from AbortSignal. */
let sharedDispatcher: Agent | undefined;
export function dispatcher(): Agent {
  sharedDispatcher ??= new (undici().Agent)({ connectTimeout: 10_000, keepAliveTimeout: 1_000 });
  return sharedDispatcher;
}

/** The content-codings `fetch` decodes (and announces in Accept-Encoding). */
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * The body as the agent meant it: each content-coding undone, last applied first (RFC 9110 §8.4). A coding we do not
 * know is an error, as it is for `fetch`.
 */
function decoded(body: Readable, contentEncoding: string | null): Readable {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let stream = body;
  for (const coding of codings.reverse()) {
    const decoder = DECODERS[coding];
    if (!decoder) {
      discard(body);
      throw new Error(
        `the agent's answer has content-encoding "${coding.slice(0, 40)}", which the runner does not decode (it asks for ${ACCEPT_ENCODING})`,
      );
    }
    // pipeline destroys every stage when one fails, so a bad gzip stream or an aborted request ends the whole body.
    stream = pipeline(stream, decoder(), () => {});
  }
  return stream;
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<globalThis.Response>;

/** What `fetch` would send unasked; agents may compress, the decompress interceptor decodes. */
const ACCEPT_ENCODING = 'gzip, deflate, br';
/** Statuses whose Response must have a null body (Fetch standard: null body status), and HEAD answers. */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/** The request headers as one record (a Headers object, pairs or a record), with Accept-Encoding as fetch sends it. */
function requestHeaders(init: RequestInit['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  new (undici().Headers)(init as ConstructorParameters<Undici['Headers']>[0]).forEach((value, name) => {
    headers[name] = value;
  });
  headers['accept-encoding'] ??= ACCEPT_ENCODING;
  return headers;
}

/** A request body `request` takes: text and bytes (all our callers and the MCP client send JSON text). */
function requestBody(body: RequestInit['body']): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError(`boundedFetch sends text or bytes, not ${Object.prototype.toString.call(body)}`);
}

/** undici's header record (lower-case names, arrays for repeated headers) as a Headers object. */
/** undici's raw response headers as `[name, value]` pairs, lower-cased, a repeated header once per value. */
export function headerPairs(raw: Record<string, string | string[] | undefined>): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) pairs.push([name.toLowerCase(), one]);
  }
  return pairs;
}

function responseHeaders(raw: Record<string, string | string[] | undefined>): InstanceType<Undici['Headers']> {
  return new (undici().Headers)(headerPairs(raw));
}

export function boundedFetch(options: BoundedFetchOptions): FetchLike {
  const via = options.dispatcher ?? dispatcher();
  return async (url, init) => {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const method = (init?.method ?? 'GET').toUpperCase();
    const answer = await undici().request(url, {
      method: method as Dispatcher.HttpMethod,
      headers: requestHeaders(init?.headers),
      body: requestBody(init?.body),
      signal,
      dispatcher: via,
    });
    const status = answer.statusCode;
    const headers = responseHeaders(answer.headers);
    const observed: ObservedHttp = { status, headers: [...headers], url: String(url), method };
    options.onResponse?.(observed);
    const statusText = (answer as { statusText?: string }).statusText ?? '';
    if (NULL_BODY_STATUSES.has(status) || method === 'HEAD') {
      answer.body.resume();
      return new (undici().Response)(null, { status, statusText, headers }) as unknown as globalThis.Response;
    }
    const declared = Number(headers.get('content-length'));
    // A declared length says nothing of a compressed body's decoded size; the stream below counts what is read.
    if (Number.isFinite(declared) && declared > options.maxResponseBytes && !headers.has('content-encoding')) {
      discard(answer.body);
      throw new ResponseTooLargeError(options.maxResponseBytes);
    }
    const body = decoded(answer.body, headers.get('content-encoding'));
    if (status >= 400) {
      // Error answers are small and the client library turns them into a
      // message string; keep the body itself for the step record.
      const text = await readBounded(body, options.maxResponseBytes);
      observed.errorBody = text;
      return new (undici().Response)(text, { status, statusText, headers }) as unknown as globalThis.Response;
    }
    return new (undici().Response)(countedWebStream(body, options), {
      status,
      statusText,
      headers,
    }) as unknown as globalThis.Response;
  };
}

/**
 * The body as a web stream that counts what it hands on: past `maxResponseBytes` it errors with ResponseTooLargeError
 * (and tells `onTooLarge`). It reads the Node stream only when its reader pulls, so backpressure reaches the socket,
 * and a reader that cancels destroys the body. Written out rather than `pipeline` into a counting Transform then
 * `Readable.toWeb`: the same bytes with two stream stages less, about a fifth of a millisecond of CPU per response
 * (every MCP call, session open and tool list of a run).
 */
function countedWebStream(body: Readable, options: BoundedFetchOptions): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const limit = options.maxResponseBytes;
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        controller.error(error);
        return;
      }
      if (next.done) return controller.close();
      seen += next.value.byteLength;
      if (seen <= limit) return controller.enqueue(next.value);
      const error = new ResponseTooLargeError(limit);
      options.onTooLarge?.(error);
      discard(body);
      controller.error(error);
    },
    cancel() {
      discard(body);
    },
  });
}

/** Stops reading a body nobody will read: undici then aborts the request, an error no one needs to hear. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** A body read whole, at most `limit` bytes: past it, reading stops and ResponseTooLargeError is thrown. */
export async function readBounded(body: Readable, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    seen += chunk.byteLength;
    if (seen > limit) {
      discard(body);
      throw new ResponseTooLargeError(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A schema validation error of the protocol SDK (zod: an `issues` list, or a
 * message that is that list as JSON) in one line: where and what, not forty
 * lines of JSON.
 */
function schemaIssues(error: unknown): string | undefined {
  let issues: unknown = (error as { issues?: unknown })?.issues;
  if (!Array.isArray(issues) && error instanceof Error && error.message.trimStart().startsWith('[')) {
    try {
      issues = JSON.parse(error.message);
    } catch {
      return undefined;
    }
  }
  if (
    !Array.isArray(issues) ||
    issues.length === 0 ||
    !issues.every((i) => i && typeof i === 'object' && 'message' in i)
  )
    return undefined;
  const closest = closestBranch(issues as SchemaIssue[]);
  const shown = closest.slice(0, 3).map((i) => {
    const where = Array.isArray(i.path) && i.path.length > 0 ? `${i.path.join('.')}: ` : '';
    return `${where}${String(i.message).replace(/^Invalid input: /, '')}`;
  });
  return `the agent's answer does not have the shape the protocol requires (${shown.join('; ')}${closest.length > 3 ? `; +${closest.length - 3} more` : ''})`;
}

interface SchemaIssue {
  code?: string;
  path?: unknown[];
  message?: unknown;
  errors?: SchemaIssue[][];
}

/**
 * A union that matched no branch says only "Invalid input" (an answer with `result: null` fails every kind of
 * JSON-RPC message): report the branch that came closest — the fewest issues — with its paths, e.g.
 * `result: expected object, received null`.
 */
function closestBranch(issues: SchemaIssue[], prefix: unknown[] = [], depth = 0): SchemaIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...(Array.isArray(issue.path) ? issue.path : [])];
    const branches =
      issue.code === 'invalid_union' && Array.isArray(issue.errors)
        ? issue.errors.filter((b) => Array.isArray(b) && b.length > 0)
        : [];
    if (branches.length === 0 || depth >= 8) return [{ ...issue, path }];
    return closestBranch(
      branches.reduce((best, branch) => (branch.length < best.length ? branch : best)),
      path,
      depth + 1,
    );
  });
}

/** A call that ran out of time (its deadline signal, a client timeout), as opposed to one the agent or the network refused. */
export function isTimeoutError(error: unknown): boolean {
  return (
    (error as { name?: unknown } | null)?.name === 'TimeoutError' ||
    /timed? ?out|aborted|AbortError|TimeoutError/i.test(describeError(error))
  );
}

/** Message of an error and its causes, for the step's `error` field. */
export function describeError(error: unknown): string {
  const schema = schemaIssues(error);
  if (schema) return schema;
  const parts: string[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an error's cause chain holds anything a library threw
  let current: any = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message && !parts.some((p) => p.includes(message))) parts.push(message);
    current = current?.cause;
  }
  return parts.join(': ') || 'unknown error';
}
