import type { ProbeOptions } from './probe.js';
import type { WwwAuthenticateOptions } from './to-expose-www-authenticate.js';

/** The part of Vitest's / Jest's matcher `this` our matchers use. */
export interface MatcherContext {
  isNot: boolean;
  promise?: string;
  utils: {
    matcherHint(name: string, received?: string, expected?: string, options?: { isNot?: boolean; promise?: string }): string;
    printExpected(value: unknown): string;
    printReceived(value: unknown): string;
  };
}

export interface MatcherResult {
  pass: boolean;
  message: () => string;
}

/**
 * Matchers for hand-written tests against an AdCP agent. The received value is
 * the agent's URL (the matcher makes an unauthenticated call, over MCP or, with
 * `protocol: 'a2a'`, A2A) or an answer already recorded: an exchange, an HTTP
 * probe, a step record (`task.meta.adcp`, the contract report), or
 * `{ status, headers }`. All are async: await them.
 */
export interface AdcpMatchers {
  /** A call without credentials is refused with HTTP 401 or 403. */
  toRejectUnauthenticated(options?: ProbeOptions): Promise<void>;
  /** A call without credentials gets a 401 carrying a WWW-Authenticate header (offering `scheme`, if given). */
  toExposeWwwAuthenticate(options?: WwwAuthenticateOptions): Promise<void>;
}
