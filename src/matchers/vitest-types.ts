/**
 * The AdCP matchers in Vitest's types: on `expect(x)` (`Assertion`, which
 * `expect.soft` and `.not` return too) and as asymmetric matchers
 * (`expect.toMatchAdcpSchema(…)` inside `toEqual`, on records only — an
 * asymmetric matcher cannot await a URL or a Response).
 */
import type { AdcpMatchers, AdcpMatchersReturning } from './types.js';

declare module 'vitest' {
  interface Assertion<T = any> extends AdcpMatchers<T> {}
  interface AsymmetricMatchersContaining extends AdcpMatchersReturning<any> {}
}
