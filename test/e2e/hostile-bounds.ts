/** The bounds of the hostile runs (hostile.config.ts), shared with the tests that assert on them. */

/** The step timeout: above Vitest's default 5 s test timeout, and 1.5 s above the 5.5 s answer of `slow_5500`, so a busy machine does not turn it into a timeout. */
export const HOSTILE_TIMEOUT_MS = 7_000;
/** The response limit: `flood`, `oversize_declared` and `gzip_bomb` go past it. */
export const HOSTILE_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
