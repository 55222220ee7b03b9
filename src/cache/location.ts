/**
 * Where a run keeps its caches when the `cacheDir` option does not say.
 *
 * Inside a package (a `package.json` in the project root or above it): `vitest-adcp/` in Vite's resolved cache
 * directory (`node_modules/.vite/vitest-adcp` unless the project moved it), beside Vite's and Vitest's own caches,
 * cleared with them.
 *
 * Outside any package — `npx vitest-adcp <url>` in an empty or unrelated directory — Vite still resolves
 * `<root>/node_modules/.vite`, so a run used to create `node_modules/` in whatever directory it was started from (a
 * home directory, a checkout of something else, a directory other users can write). There the caches go to this
 * user's cache directory of the OS instead (`cache/disk-cache.ts` `userCacheRoot()`: `~/.cache/vitest-adcp/cache` on
 * Linux), the place made for it: per user, nothing left behind in the working directory (Vite's own cache directory,
 * where Vitest keeps its results, goes to `vitest-adcp/vite` there: plugin/projects.ts `configHook`). Entries are
 * named by everything they are made from (file paths included), so runs from different directories never serve each
 * other stale entries, and they are authenticated either way (disk-cache.ts).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { userCacheRoot } from './disk-cache.js';

/** The directory of the nearest `package.json` at or above `dir`, or undefined. */
export function packageRoot(dir: string): string | undefined {
  for (let current = resolve(dir); ; current = dirname(current)) {
    if (existsSync(join(current, 'package.json'))) return current;
    if (dirname(current) === current) return undefined;
  }
}

/** The default cache directory of a run rooted at `root`, whose Vite cache directory is `viteCacheDir`. */
export function defaultCacheDir(root: string, viteCacheDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return packageRoot(root) !== undefined
    ? join(resolve(root, viteCacheDir), 'vitest-adcp')
    : join(userCacheRoot(env), 'cache');
}

/**
 * Vite's own cache directory (where Vitest keeps its results) for a run rooted at `root`: outside any package,
 * `vite/` of this user's cache directory, as ours (Vite's default would make `<root>/node_modules/.vite`); inside one,
 * undefined — Vite's default.
 */
export function viteCacheDirOutsidePackage(root: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return packageRoot(root) === undefined ? join(userCacheRoot(env), 'vite') : undefined;
}
