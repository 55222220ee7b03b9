/**
 * One HTTP request exactly as the runner built it — the signed-requests
 * vectors need header bytes no client library would write on its own (a
 * malformed Signature-Input, a non-ASCII Host). undici's `request`: header
 * fields sent as given (Host included), redirects never followed, the whole
 * exchange bounded in time and the body in size.
 */
import type { Readable } from 'node:stream';
import { undici } from '../model/undici.js';
import { jsonRpcAnswerIn } from './answer-body.js';
import { describeError, dispatcher, headerPairs, isTimeoutError, readBounded, ResponseTooLargeError } from './http.js';

export interface RawRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** A Host header instead of the URL's authority; non-ASCII is sent as its UTF-8 bytes. */
  host?: string;
  body: string;
}

export interface RawResponse {
  status: number;
  headers: [string, string][];
  /** The body as text (bounded). */
  body: string;
  durationMs: number;
}

export interface RawFailure {
  error: string;
  durationMs: number;
}

export interface RawOptions {
  timeoutMs: number;
  maxResponseBytes: number;
}

export async function sendRaw(raw: RawRequest, options: RawOptions): Promise<RawResponse | RawFailure> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const headers: Record<string, string> = { ...raw.headers };
  // Node's HTTP writer sends a header string as latin1: pass the UTF-8 bytes that way so they arrive unchanged.
  if (raw.host !== undefined) headers.host = Buffer.from(raw.host, 'utf8').toString('latin1');
  try {
    const response = await undici().request(raw.url, {
      method: raw.method as 'POST',
      headers,
      body: raw.body,
      dispatcher: dispatcher(),
      signal: AbortSignal.timeout(options.timeoutMs),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const body = await readBounded(response.body as unknown as Readable, options.maxResponseBytes);
    return { status: response.statusCode, headers: headerPairs(response.headers), body, durationMs: elapsed() };
  } catch (error) {
    if (error instanceof ResponseTooLargeError) return { error: error.message, durationMs: elapsed() };
    const message = describeError(error);
    const timedOut = isTimeoutError(error);
    return {
      error: timedOut
        ? `no answer within ${options.timeoutMs} ms (${message})`
        : `${raw.method} ${raw.url} failed: ${message}`,
      durationMs: elapsed(),
    };
  }
}

/** The JSON body of an answer: plain JSON, or the JSON-RPC response event of an event stream (answer-body.ts); else the text. */
export function parseAnswerBody(body: string, contentType: string | undefined): unknown {
  if (body.trim() === '') return undefined;
  const answer = jsonRpcAnswerIn(body, { contentType });
  // Not JSON at all: the text itself is what the agent answered.
  return answer === undefined ? body : answer;
}
