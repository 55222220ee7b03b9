import type { ProbeOptions } from './probe.js';
import type { RejectUnauthenticatedOptions } from './to-reject-unauthenticated.js';
import type { ChallengeParams, WwwAuthenticateOptions } from './to-expose-www-authenticate.js';
import type { AdcpSchemaOptions } from './to-match-adcp-schema.js';

/** The part of Vitest's / Jest's matcher `this` our matchers use. */
export interface MatcherContext {
  isNot: boolean;
  promise?: string;
  /** Deep equality that honours asymmetric matchers (`expect.stringMatching(…)`). */
  equals(a: unknown, b: unknown): boolean;
  utils: {
    matcherHint(
      name: string,
      received?: string,
      expected?: string,
      options?: { isNot?: boolean; promise?: string },
    ): string;
    printExpected(value: unknown): string;
    printReceived(value: unknown): string;
    diff(expected: unknown, received: unknown, options?: unknown): string | null | undefined;
    /** The framework's printing of a value (pretty-format, with its asymmetric-matcher plugin: `StringContaining "x"`). */
    stringify?(value: unknown): string;
  };
}

export interface MatcherResult {
  pass: boolean;
  message: () => string;
  actual?: unknown;
  expected?: unknown;
}

/** A Fetch `Response`, structurally (so these types need no DOM lib). */
export interface FetchResponseLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  clone(): unknown;
}

/**
 * What an AdCP matcher returns for a received value of type `T`: a Promise —
 * await it — when judging needs I/O (an agent URL: the matcher calls it; a
 * fetch `Response`: its body is read), nothing for a record (a client
 * response, a step result, a CallToolResult, `{ status, headers }`).
 */
export type AdcpMatcherReturn<T> = 0 extends 1 & T
  ? void | Promise<void>
  : T extends string | FetchResponseLike
    ? Promise<void>
    : void;

/**
 * The AdCP matchers, returning `R`. Each takes an agent response in any of
 * these forms: a `createAdcpClient()` response, a step result (`StepResult`,
 * `task.meta.adcp`, a contract report record), a fetch `Response`, an MCP
 * `CallToolResult`, or `{ status, headers }`; the two auth matchers also take
 * the agent's URL (they make an unauthenticated call themselves).
 */
export interface AdcpMatchersReturning<R> {
  /**
   * The call was refused for its credentials: HTTP 401 or 403 (security_baseline's `http_status_in [401, 403]`);
   * 2xx, 5xx, a timeout or no HTTP answer fail. `{ allowBadRequest: true }` also accepts 400, which security.yaml
   * allows for a malformed or bogus credential (RFC 6750 §3.1 `invalid_request`), not for a call without any.
   */
  toRejectUnauthenticated(options?: RejectUnauthenticatedOptions): R;
  /**
   * A 401 whose `WWW-Authenticate` (RFC 9110 §11.6.1) has a challenge of `scheme` (case-insensitive) carrying
   * every one of `params` (names case-insensitive; values a string, a RegExp or an asymmetric matcher).
   */
  toExposeWwwAuthenticate(scheme?: string, params?: ChallengeParams, probe?: ProbeOptions): R;
  /** The URL form's options object: `{ scheme, params, task, protocol, timeoutMs }`. */
  toExposeWwwAuthenticate(options: WwwAuthenticateOptions): R;
  /**
   * The task data validates against an AdCP JSON Schema (`media-buy/list-creatives-response.json`, or a task name
   * for its response schema; omitted: the response schema of the task called), through the engine's schema registry.
   */
  toMatchAdcpSchema(ref?: string, options?: AdcpSchemaOptions): R;
  /** The answer carries an AdCP error whose code is `code` (or one of `codes`; omitted: any), read where the `error_code` check reads it. */
  toHaveAdcpErrorCode(code?: string | readonly string[]): R;
  /** The answer echoes `sent` as its `context`, verbatim; with no context sent, carries none. Omitted: the context of the request the record carries. */
  toEchoContext(sent?: unknown): R;
  /** A storyboard step's result passed (not failed, not skipped); the failure message is the step's own. */
  toPassStoryboardStep(): R;
}

/** The AdCP matchers on `expect(received)`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the default Vitest and Jest give their matcher interfaces' received type
export interface AdcpMatchers<T = any> extends AdcpMatchersReturning<AdcpMatcherReturn<T>> {}
