/**
 * The config of the hostile-agent runs (test/e2e/hostile.test.ts, test/e2e/memory.test.ts): our plugin as a user
 * adds it, with bounds of its own — a step timeout above Vitest's default 5 s test timeout (which this config leaves
 * alone, so a 5.5 s answer proves the plugin's own per-step timeout is what Vitest uses) and a small response limit.
 * HOSTILE_STORYBOARDS: comma-separated globs; HOSTILE_MAX_RESPONSE_BYTES overrides the limit (the memory run keeps
 * the default, 10 MiB, to read its 8 MB answers whole).
 */
import { defineConfig } from 'vitest/config';
import { adcpStoryboards } from './plugin-under-test.js';
import { HOSTILE_MAX_RESPONSE_BYTES, HOSTILE_TIMEOUT_MS } from './hostile-bounds.js';

export default defineConfig({
  plugins: [
    adcpStoryboards({
      include: (process.env.HOSTILE_STORYBOARDS ?? '').split(',').filter(Boolean),
      timeoutMs: HOSTILE_TIMEOUT_MS,
      maxResponseBytes: process.env.HOSTILE_MAX_RESPONSE_BYTES
        ? Number(process.env.HOSTILE_MAX_RESPONSE_BYTES)
        : HOSTILE_MAX_RESPONSE_BYTES,
    }),
  ],
  test: { include: [], passWithNoTests: true },
});
