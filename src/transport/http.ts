/**
 * HTTP plumbing shared by the transports: an undici-based `fetch` that bounds
 * time and size, and remembers the status and headers of the last response so a
 * failed call can still report what the agent said (401 + WWW-Authenticate).
 */
import { Agent, fetch as undiciFetch, Response, type Dispatcher } from 'undici';

export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the agent's response exceeded ${limit} bytes; the runner stopped reading it (limit: option maxResponseBytes)`);
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
  /** Where connections come from (url-guard.ts pins one to a vetted address). @default the shared pool */
  dispatcher?: Dispatcher;
}

/** One connection pool for the process; per-request timeouts come from AbortSignal. */
let sharedDispatcher: Agent | undefined;
function dispatcher(): Agent {
  sharedDispatcher ??= new Agent({ connectTimeout: 10_000, keepAliveTimeout: 1_000 });
  return sharedDispatcher;
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<globalThis.Response>;

export function boundedFetch(options: BoundedFetchOptions): FetchLike {
  return async (url, init) => {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const response = await undiciFetch(url, { ...(init as any), signal, dispatcher: options.dispatcher ?? dispatcher() });
    const observed: ObservedHttp = { status: response.status, headers: [...response.headers], url: String(url), method: (init?.method ?? 'GET').toUpperCase() };
    options.onResponse?.(observed);
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > options.maxResponseBytes) {
      await response.body?.cancel().catch(() => {});
      throw new ResponseTooLargeError(options.maxResponseBytes);
    }
    if (!response.body) return response as unknown as globalThis.Response;
    if (response.status >= 400) {
      // Error answers are small and the client library turns them into a
      // message string; keep the body itself for the step record.
      const text = await readBounded(response.body, options.maxResponseBytes);
      observed.errorBody = text;
      return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers }) as unknown as globalThis.Response;
    }
    let seen = 0;
    const limit = options.maxResponseBytes;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > limit) controller.error(new ResponseTooLargeError(limit));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(limited as any, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    }) as unknown as globalThis.Response;
  };
}

async function readBounded(body: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    seen += chunk.byteLength;
    if (seen > limit) throw new ResponseTooLargeError(limit);
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
  if (!Array.isArray(issues) || issues.length === 0 || !issues.every((i) => i && typeof i === 'object' && 'message' in i)) return undefined;
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
    const branches = issue.code === 'invalid_union' && Array.isArray(issue.errors) ? issue.errors.filter((b) => Array.isArray(b) && b.length > 0) : [];
    if (branches.length === 0 || depth >= 8) return [{ ...issue, path }];
    return closestBranch(branches.reduce((best, branch) => (branch.length < best.length ? branch : best)), path, depth + 1);
  });
}

/** Message of an error and its causes, for the step's `error` field. */
export function describeError(error: unknown): string {
  const schema = schemaIssues(error);
  if (schema) return schema;
  const parts: string[] = [];
  let current: any = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message && !parts.some((p) => p.includes(message))) parts.push(message);
    current = current?.cause;
  }
  return parts.join(': ') || 'unknown error';
}
