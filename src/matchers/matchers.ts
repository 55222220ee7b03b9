/**
 * The AdCP matchers as one object for `expect.extend()`, free of any test
 * framework import: `vitest-adcp/matchers` registers them with Vitest's
 * `expect`, `vitest-adcp/matchers/jest` with Jest's.
 */
import { toEchoContext } from './to-echo-context.js';
import { toExposeWwwAuthenticate } from './to-expose-www-authenticate.js';
import { toHaveAdcpErrorCode } from './to-have-adcp-error-code.js';
import { toMatchAdcpSchema } from './to-match-adcp-schema.js';
import { toPassStoryboardStep } from './to-pass-storyboard-step.js';
import { toRejectUnauthenticated } from './to-reject-unauthenticated.js';

export const adcpMatchers = {
  toRejectUnauthenticated,
  toExposeWwwAuthenticate,
  toMatchAdcpSchema,
  toHaveAdcpErrorCode,
  toEchoContext,
  toPassStoryboardStep,
};

export type {
  AdcpMatchers,
  AdcpMatchersReturning,
  AdcpMatcherReturn,
  FetchResponseLike,
  MatcherContext,
  MatcherResult,
} from './types.js';
export type { ProbeOptions } from './probe.js';
export type { RejectUnauthenticatedOptions } from './to-reject-unauthenticated.js';
export type { ChallengeParams, WwwAuthenticateOptions } from './to-expose-www-authenticate.js';
export type { AdcpSchemaOptions } from './to-match-adcp-schema.js';
