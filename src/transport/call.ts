/**
 * What a call of either transport (mcp.ts, a2a.ts) shares: its abort signal, and how its failure reads in the step's
 * `error` — one wording, so an MCP and an A2A agent that fail the same way read the same.
 */
import { describeError, isTimeoutError, type ObservedHttp } from './http.js';
import type { CallOptions } from './types.js';

/** A call's abort signal, and the end of it (CallScope.end) once the call is over. */
export interface CallScope {
  /** Aborts when the caller's signal does, or when the call's time (timeoutMs) is up; never after `end()`. */
  readonly signal: AbortSignal;
  /** The call is over: its timer is cleared and the caller's signal no longer reaches `signal`. Idempotent. */
  end(): void;
}

/**
 * The signal of one call, which goes quiet when the call ends. Why not `AbortSignal.any([caller, AbortSignal.timeout()])`:
 * that signal aborts later whatever became of the call, and the MCP SDK adds an abort listener to each request's
 * signal that it never removes and that sends the agent `notifications/cancelled` for the request — so every request,
 * long answered, was "cancelled" when its timeout came round (30 s after it was sent, by default) or when the run was
 * cancelled, unless the garbage collector had taken the signal first. A signal that cannot abort after `end()` leaves
 * nothing behind: no timer, no listener on the caller's signal.
 */
export function openCallScope(options: Pick<CallOptions, 'signal' | 'timeoutMs'>): CallScope {
  const controller = new AbortController();
  const caller = options.signal;
  const onCallerAbort = () => controller.abort(caller?.reason);
  const timer = setTimeout(() => controller.abort(timeoutReason()), options.timeoutMs);
  // As AbortSignal.timeout's: the call's own I/O keeps the process alive, not its bound.
  timer.unref();
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    end: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}

/** What AbortSignal.timeout aborts with (a DOMException named TimeoutError), so a timeout reads as before (isTimeoutError). */
function timeoutReason(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
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
