/**
 * `vitest-adcp/matchers/jest`: the AdCP matchers for Jest. Add it to
 * `setupFilesAfterEnv` (Jest's `expect` is a global there); no Vitest import.
 * Jest `require`s it: that is its CommonJS build (dist/cjs/, scripts/build-cjs.mjs),
 * which Jest loads on Node 20 with or without the preset. Under the preset's test
 * environment the matchers the environment loaded beside the engine are used.
 */
import { adcpMatchers } from './matchers.js';
import './jest-types.js';

export * from './matchers.js';

const jestExpect = (globalThis as { expect?: { extend?: (matchers: object) => void } }).expect;
if (typeof jestExpect?.extend !== 'function') {
  throw new Error(
    "vitest-adcp/matchers/jest needs Jest's global expect: list it in setupFilesAfterEnv of your Jest config. Under Vitest, import 'vitest-adcp/matchers' instead",
  );
}
const runtime = (globalThis as { __vitestAdcpJest?: { matchers?(): Record<string, unknown> } }).__vitestAdcpJest;
jestExpect.extend(runtime?.matchers?.() ?? adcpMatchers);
