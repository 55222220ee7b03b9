/**
 * `vitest-adcp/jest/runtime`: what a storyboard compiled for Jest requires. It runs inside the test file's sandbox
 * (Jest's module registry, CommonJS), so it only hands over the runtime the test environment put on the test file's
 * global (environment.cts): the engine itself is loaded by Node, once per worker, outside the sandbox.
 */
const runtime = (globalThis as { __vitestAdcpJest?: unknown }).__vitestAdcpJest;
if (!runtime) {
  throw new Error(
    "vitest-adcp: storyboards under Jest run in vitest-adcp's test environment. Use preset: 'vitest-adcp/jest' in your Jest config, " +
      "or set testEnvironment: 'vitest-adcp/jest/environment' (it extends jest-environment-node)",
  );
}
module.exports = runtime;
