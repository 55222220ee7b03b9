/**
 * The AdCP matchers in Jest's types (`@types/jest`'s global `jest.Matchers`),
 * declared so that @types/jest need not be installed: without it this only
 * declares the namespace. The type parameters must stay `<R, T = {}>`, as
 * @types/jest (and Vitest's own jest-compatibility declaration) write them.
 */
import type { AdcpMatcherReturn, AdcpMatchersReturning } from './types.js';

declare global {
  namespace jest {
    // R is void on `expect(x)` (Jest's, and Vitest's JestAssertion, which extends jest.Matchers<void, T>): then the
    // return follows the received type as on Vitest's Assertion; on `.resolves`/`.rejects` it is Jest's Promise.
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: Jest's own default is `T = {}`
    interface Matchers<R, T = {}> extends AdcpMatchersReturning<[R] extends [void] ? AdcpMatcherReturn<T> : R> {}
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an asymmetric matcher returns whatever Jest's own do
    interface Expect extends AdcpMatchersReturning<any> {}
  }
}
