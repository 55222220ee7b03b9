/**
 * `vitest-adcp/matchers/jest`: the AdCP matchers for Jest. Add it to
 * `setupFilesAfterEnv` (Jest's `expect` is a global there); no Vitest import.
 */
import { adcpMatchers } from './matchers.js';
import './jest-types.js';

export * from './matchers.js';

const jestExpect = (globalThis as { expect?: { extend?: (matchers: object) => void } }).expect;
if (typeof jestExpect?.extend !== 'function') {
  throw new Error("vitest-adcp/matchers/jest needs Jest's global expect: list it in setupFilesAfterEnv of your Jest config. Under Vitest, import 'vitest-adcp/matchers' instead");
}
jestExpect.extend(adcpMatchers);
