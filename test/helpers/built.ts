/**
 * The current src built once per test run (once-per-run.ts) by the package's own build (scripts/build.mjs), without
 * type checking (`npm test` type-checks beside the suite) or declarations, source maps as tsconfig.json has them (on):
 * with the CommonJS build of `vitest-adcp/client` and `vitest-adcp/matchers/jest` (dist/cjs): the Jest runs load the
 * matchers through it, as a user's `setupFilesAfterEnv` does; and the storyboard schema's validator compiled ahead, as
 * the package ships it.
 *
 * The e2e configs load the plugin from the shared build itself, which they only read (test/e2e/plugin-under-test.ts;
 * schema/ and package.json are linked beside it). Every other user copies it with `copyBuiltDist` into their own
 * scratch dir, laid out as they choose (schema/, package.json, examples/ beside it are theirs to add), and theirs to
 * write into. The shared build is at `.vitest-adcp/<run>/dist`, the depth of the scratch dirs'
 * `.vitest-adcp/<name>/dist`, so the source maps' relative paths to src/ hold in the copies too.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exec, oncePerRun, repoRoot } from './once-per-run.js';

/** The shared build's dist/ (do not write into it). */
export function builtDist(): Promise<string> {
  return oncePerRun('build', build, { timeoutMs: 240_000 });
}

async function build(dir: string): Promise<string> {
  const dist = join(dir, 'dist');
  // Laid out as the package: the e2e configs load the plugin from this build (test/e2e/plugin-under-test.ts), which
  // reads its storyboard schema and its version beside dist/ — as does the build's compile of the schema's validator.
  for (const name of ['schema', 'package.json']) symlinkSync(join(repoRoot, name), join(dir, name));
  await exec(process.execPath, [join(repoRoot, 'scripts', 'build.mjs'), '--out', dist, '--no-declarations'], {
    cwd: repoRoot,
    env: { ...process.env, VITEST_ADCP_BUILD_NO_CHECK: '1' },
  });
  return dist;
}

/**
 * A module of the shared build by its path from src/ without extension (`vitest/reporter`): what a child run names
 * (a reporter) beside the plugin the e2e configs load from the same build (test/e2e/plugin-under-test.ts), as an
 * install's `vitest-adcp/reporter` sits beside its plugin.
 */
export async function builtModule(fromSrc: string): Promise<string> {
  return join(await builtDist(), `${fromSrc}.js`);
}

/**
 * Copies the shared build into `target` (a dist/ of the caller's, created). `sourceMaps: false` gives what
 * `--sourceMap false` would have built: no .map files, no `//# sourceMappingURL` comments.
 */
export async function copyBuiltDist(target: string, options: { sourceMaps: boolean }): Promise<void> {
  copyTree(await builtDist(), target, options.sourceMaps);
}

/** tsc's last line with source maps on; without, the file ends at the newline before it. */
const MAP_COMMENT = /\n\/\/# sourceMappingURL=[^\n]*\.map\s*$/;

function copyTree(from: string, to: string, sourceMaps: boolean): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target, sourceMaps);
    else if (sourceMaps) copyFileSync(source, target);
    else if (entry.name.endsWith('.map')) continue;
    else if (/\.[cm]?js$/.test(entry.name))
      writeFileSync(target, readFileSync(source, 'utf8').replace(MAP_COMMENT, '\n'));
    else copyFileSync(source, target);
  }
}
