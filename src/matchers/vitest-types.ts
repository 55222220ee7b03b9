/**
 * The AdCP matchers in Vitest's types: on `expect(x)` (`Assertion`, which
 * `expect.soft` and `.not` return too) and as asymmetric matchers
 * (`expect.toMatchAdcpSchema(…)` inside `toEqual`, on records only — an
 * asymmetric matcher cannot await a URL or a Response).
 */
import type { AdcpMatchers, AdcpMatchersReturning } from './types.js';

declare module 'vitest' {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- declaration merging: the type parameter must match Vitest's own `Assertion<T = any>`
  interface Assertion<T = any> extends AdcpMatchers<T> {}
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an asymmetric matcher returns whatever Vitest's own do
  interface AsymmetricMatchersContaining extends AdcpMatchersReturning<any> {}
}
