/**
 * Global setup: one directory per test run for what the tests build once and share (test/helpers/once-per-run.ts): the
 * packed tarball (test/helpers/packed.ts) and the `--noCheck` build of src (test/helpers/built.ts). Under the repo's
 * .vitest-adcp/ (git-ignored), at the depth of the tests' own scratch dirs (`.vitest-adcp/<name>/dist`), so a build
 * copied into a scratch dir keeps its source maps' relative paths and resolves the repo's node_modules. Removed after
 * the run. Tests read its path with `inject('sharedRunDir')`; a config without this setup leaves it undefined, and the
 * helpers then build privately.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { alive } from '../helpers/alive.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The per-run directory of test/helpers/once-per-run.ts; undefined under a config without this global setup. */
    sharedRunDir?: string;
  }
}

export default function setup(project: TestProject) {
  const parent = join(resolve(import.meta.dirname, '..', '..'), '.vitest-adcp');
  mkdirSync(parent, { recursive: true });
  // What runs that ended without their teardown (killed), and fallback dirs of workers gone, left behind.
  for (const name of readdirSync(parent)) {
    const pid = Number(/^(?:run|private)-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !alive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(parent, `run-${process.pid}-`));
  project.provide('sharedRunDir', dir);
  return () => {
    rmSync(dir, { recursive: true, force: true });
  };
}
