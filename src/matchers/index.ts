/**
 * `vitest-adcp/matchers`: import once (e.g. in a setup file) to add the AdCP
 * matchers to `expect`:
 *
 * ```ts
 * import 'vitest-adcp/matchers';
 * await expect(agentUrl).toRejectUnauthenticated({ task: 'list_creatives' });
 * await expect(agentUrl).toExposeWwwAuthenticate({ scheme: 'Bearer' });
 * await expect(a2aAgentUrl).toRejectUnauthenticated({ protocol: 'a2a' });
 * await expect(stepRecord).toExposeWwwAuthenticate(); // a recorded answer: { status, headers } or { response: … }
 * ```
 */
import { expect } from 'vitest';
import { toExposeWwwAuthenticate } from './to-expose-www-authenticate.js';
import { toRejectUnauthenticated } from './to-reject-unauthenticated.js';
import type { AdcpMatchers } from './types.js';

export const adcpMatchers = { toRejectUnauthenticated, toExposeWwwAuthenticate };
export type { AdcpMatchers, MatcherContext, MatcherResult } from './types.js';
export type { ProbeOptions } from './probe.js';
export type { WwwAuthenticateOptions } from './to-expose-www-authenticate.js';

expect.extend(adcpMatchers as any);

// `Matchers` (Vitest ≥ 3.2) is what `expect(x)` returns extends; async matchers
// only make sense there, not as asymmetric matchers.
declare module 'vitest' {
  interface Matchers<T = any> extends AdcpMatchers {}
}
