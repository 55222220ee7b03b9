/**
 * `agent.start.watch` (issue 33): the agent's source globs, made into what Vitest's watcher needs — the folders to add
 * to it (Vite's watcher takes paths, not globs: it is created with `disableGlobbing`), and one RegExp for Vitest's
 * `watchTriggerPatterns`. Pure: no file system, no Vitest.
 *
 * The dialect is picomatch's, the one of Vite's and Vitest's own `include` globs: `**` any number of folders, `*` and
 * `?` within one name, `[abc]` and `{a,b}`; a wildcard does not match a name that starts with a dot, so an editor's
 * `.x.swp` or a `.git` folder under a watched folder restarts nothing. A leading `!` (negation) is refused: Vitest's
 * trigger takes one pattern of files to match, not a list to subtract.
 */
import { resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import { ConfigurationError } from '../model/errors.js';

export interface WatchedGlobs {
  /** The absolute folders (or files) to add to the watcher: each glob's part before its first wildcard. */
  readonly paths: string[];
  /** Matches an absolute `/`-separated file path one of the globs names. */
  readonly pattern: RegExp;
}

/** The globs of `agent.start.watch`, relative to `cwd` (the agent's), as folders to watch and one pattern. */
export function watchedGlobs(globs: unknown, cwd: string): WatchedGlobs {
  checkGlobs(globs);
  const absolute = globs
    // `src/` is the folder's files, as `src/**` (resolve would make it the name `src` alone).
    .map((glob) => toSlashes(resolve(cwd, glob.endsWith('/') ? `${glob}**` : glob)));
  // Each glob's part before its first wildcard: a folder (or, without a wildcard, the file itself).
  const paths = [...new Set(absolute.map((glob) => picomatch.scan(glob).base || '/'))];
  const sources = absolute.map((glob) => `(?:${picomatch.makeRe(glob).source})`);
  // No glob matches nothing (an empty RegExp would match every file).
  const pattern = sources.length ? new RegExp(sources.join('|')) : /(?!)/;
  return { paths, pattern };
}

function checkGlobs(globs: unknown): asserts globs is string[] {
  const at = Array.isArray(globs)
    ? globs.findIndex((glob) => typeof glob !== 'string' || glob.trim() === '' || glob.startsWith('!'))
    : -2;
  if (at === -1) return;
  const bad: unknown = at === -2 ? globs : (globs as unknown[])[at];
  throw new ConfigurationError(
    `agent.start.watch ${at === -2 ? 'is' : 'has'} ${JSON.stringify(bad) ?? 'undefined'}: give the agent's source as globs relative to agent.start.cwd, e.g. watch: ['src/**/*.ts'] (a glob starting with "!" is not supported: narrow the globs instead)`,
  );
}

/** Windows paths as Vitest's watcher gives them (`/`-separated); on POSIX a backslash is part of a name. */
function toSlashes(path: string): string {
  return sep === '\\' ? path.split('\\').join('/') : path;
}
