/**
 * A rate-limited answer is not a verdict. AdCP's error codes say of RATE_LIMITED "Request rate exceeded. Retry after
 * the retry_after interval. Recovery: transient." (schemas-data enums/error-code.json), and HTTP 429 means the same
 * (RFC 6585, with `Retry-After`). So the runner does what a buyer agent does: it waits, then sends the same request
 * again — the agent did not act on a request it refused for its rate.
 *
 * The wait is the process's, not the call's: every run of this process (the run host has several storyboards in flight)
 * holds its next call until it is over, so storyboards run at once slow down together instead of being graded on each
 * other's rate limit. Bounded, so that an agent that always answers RATE_LIMITED costs a step, not the run: at most
 * `maxRetries` resends and `maxWaitMs` of waiting per call (`rateLimitBoundMs`: what that adds to a step's bound);
 * then the step is graded on the rate-limited answer it got.
 */
import { findErrorCode } from '../model/answer-error.js';
import type { Exchange } from '../model/exchange.js';
import type { AgentTransport, CallOptions } from './types.js';

export interface RateLimitBounds {
  /** Resends of one call. @default 5 */
  maxRetries?: number;
  /** Waiting, summed over one call's resends. @default 120000 */
  maxWaitMs?: number;
}

const DEFAULTS: Required<RateLimitBounds> = { maxRetries: 5, maxWaitMs: 120_000 };

/** The most the rate-limit resends can add to one call bounded by `timeoutMs`: the waits, and a bounded call each. */
export function rateLimitBoundMs(timeoutMs: number, bounds: RateLimitBounds = {}): number {
  const { maxRetries, maxWaitMs } = { ...DEFAULTS, ...bounds };
  return maxWaitMs + maxRetries * timeoutMs;
}
/** Without a `retry_after` or `Retry-After`: 1 s, then doubling, at most 30 s. */
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/** The pause every call of a process observes. */
export class RateGate {
  private until = 0;

  /** Resolves when no pause is on (at once when none is); an abort ends the wait early. */
  async ready(signal?: AbortSignal): Promise<void> {
    for (let wait = this.until - Date.now(); wait > 0 && !signal?.aborted; wait = this.until - Date.now())
      await sleep(wait, signal);
  }

  /** Holds every call for `ms` from now (a longer pause already on stands). */
  pause(ms: number): void {
    this.until = Math.max(this.until, Date.now() + ms);
  }
}

/** The gate of this process's runs. */
const processRateGate = new RateGate();

/**
 * How long the agent asked to wait, in ms, when the answer is a rate limit: its `retry_after` (seconds, the AdCP
 * error's, at least 1), else the `Retry-After` header (seconds), else the back-off for this attempt; undefined when
 * it is not one.
 */
export function rateLimitWait(exchange: Exchange, attempt: number): number | undefined {
  const found = exchange.transportError ? undefined : findErrorCode(exchange);
  if (exchange.response?.status !== 429 && found?.code !== 'RATE_LIMITED') return undefined;
  // retry_after: "Sellers MUST return values between 1 and 3600. Clients MUST clamp values outside this range."
  // (core/error.json): below 1 s is 1 s. (`Retry-After: 0` is valid HTTP, RFC 9110 delay-seconds.)
  const field = secondsIn(retryAfterField(exchange.data, found?.pointer));
  const asked =
    field !== undefined ? Math.max(field, 1) : retryAfterHeaderSeconds(exchange.response?.headers?.['retry-after']);
  return asked !== undefined ? asked * 1000 : Math.min(FIRST_BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS);
}

export class RateLimitedTransport implements AgentTransport {
  private readonly bounds: Required<RateLimitBounds>;

  constructor(
    private readonly inner: AgentTransport,
    private readonly gate: RateGate = processRateGate,
    bounds: RateLimitBounds = {},
  ) {
    this.bounds = { ...DEFAULTS, ...bounds };
  }

  get kind() {
    return this.inner.kind;
  }

  get url() {
    return this.inner.url;
  }

  async call(task: string, payload: unknown, options: CallOptions): Promise<Exchange> {
    let waited = 0;
    let last: Exchange | undefined;
    for (let attempt = 0; ; attempt++) {
      await this.gate.ready(options.signal);
      // Aborted while waiting: the answer the agent gave is the step's, not a resend cut short.
      if (last && options.signal?.aborted) return last;
      const exchange = (last = await this.inner.call(task, payload, options));
      const wait = rateLimitWait(exchange, attempt);
      if (wait === undefined) return exchange;
      if (attempt >= this.bounds.maxRetries || waited + wait > this.bounds.maxWaitMs || options.signal?.aborted)
        return exchange;
      waited += wait;
      this.gate.pause(wait);
    }
  }

  listTools(options: CallOptions) {
    return this.inner.listTools(options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** `retry_after` beside the error code where `findErrorCode` found it (`/adcp_error/code`, `/payload/errors/0/code`, …), else at the top. */
function retryAfterField(data: unknown, codePointer: string | undefined): unknown {
  const at = (keys: string[]) =>
    keys.reduce<unknown>(
      (value, key) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined),
      data,
    );
  const beside = codePointer?.endsWith('/code')
    ? at([...codePointer.slice(1, -'/code'.length).split('/'), 'retry_after'])
    : undefined;
  return beside ?? at(['retry_after']);
}

/** `Retry-After`: delay-seconds, or an HTTP-date (RFC 9110 §10.2.3) counted from now. */
function retryAfterHeaderSeconds(value: string | undefined): number | undefined {
  const seconds = secondsIn(value);
  // Only the IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`): Date.parse also reads "-1" as a year.
  if (
    seconds !== undefined ||
    value === undefined ||
    !/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value.trim())
  )
    return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : secondsIn(Math.max(0, Math.ceil((date - Date.now()) / 1000)));
}

/** A non-negative number of seconds (a number, or a string of digits), at most an hour. */
function secondsIn(value: unknown): number | undefined {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())
        ? Number(value)
        : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.min(n, 3600) : undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
