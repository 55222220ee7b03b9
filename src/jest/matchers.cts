/**
 * `vitest-adcp/matchers/jest` under Jest (its `require` condition): the AdCP matchers added to Jest's `expect`. List it
 * in `setupFilesAfterEnv`. The matchers are the framework-free set (src/matchers/matchers.ts), loaded by Node beside
 * the engine through vitest-adcp's test environment (the preset's); without it, Jest's own require of the ES module
 * (Jest ≥ 30.5 on Node ≥ 24.9) loads the plain ESM registration.
 */
const runtime = (globalThis as { __vitestAdcpJest?: { matchers(): Record<string, unknown> } }).__vitestAdcpJest;
if (runtime) (globalThis as unknown as { expect: { extend(m: object): void } }).expect.extend(runtime.matchers());
else require('../matchers/jest.js');
