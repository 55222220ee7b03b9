/**
 * What a call of either transport (mcp.ts, a2a.ts) shares: its abort signal, and how its failure reads in the step's
 * `error` — one wording, so an MCP and an A2A agent that fail the same way read the same.
 */
import { describeError, isTimeoutError, type ObservedHttp } from './http.js';
import type { CallOptions } from './types.js';

/** A call's signal: the caller's, if any, and the call's timeout. */
export function callSignal(options: Pick<CallOptions, 'signal' | 'timeoutMs'>): AbortSignal {
  return options.signal
    ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)])
    : AbortSignal.timeout(options.timeoutMs);
}

/**
 * A failed call, for the step's `error`: a timeout says how to raise the bound, an HTTP error status is named, and
 * `doing` (e.g. "reading the agent card") says what the call was at.
 */
export function describeTransportError(
  error: unknown,
  observed: ObservedHttp | undefined,
  timeoutMs: number,
  doing?: string,
): string {
  const message = describeError(error);
  if (isTimeoutError(error)) {
    return `no answer within ${timeoutMs} ms${doing ? ` ${doing}` : ''} (${message}); raise the step timeout (option timeoutMs) if the agent is just slow`;
  }
  if (observed && observed.status >= 400) return `HTTP ${observed.status} from the agent: ${message}`;
  return doing ? `${doing}: ${message}` : message;
}
