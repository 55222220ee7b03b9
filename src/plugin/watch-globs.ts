/**
 * `agent.start.watch` (issue 33): the agent's source globs, made into what Vitest's watcher needs — the folders to add
 * to it (Vite's watcher takes paths, not globs: it is created with `disableGlobbing`), and one RegExp for Vitest's
 * `watchTriggerPatterns`. Pure: no file system, no Vitest.
 *
 * The dialect is the common one of `include` globs: `**` any number of folders, `*` and `?` within one name, `[abc]`
 * and `{a,b}`. As picomatch does, a wildcard does not match a name that starts with a dot, so an editor's `.x.swp` or
 * a `.git` folder under a watched folder restarts nothing. A leading `!` (negation) is not supported: it is refused.
 */
import { resolve, sep } from 'node:path';
import { ConfigurationError } from '../model/errors.js';

export interface WatchedGlobs {
  /** The absolute folders (or files) to add to the watcher: each glob's part before its first wildcard. */
  readonly paths: string[];
  /** Matches an absolute `/`-separated file path one of the globs names. */
  readonly pattern: RegExp;
}

const WILDCARD = /[*?[{]/;

/** The globs of `agent.start.watch`, relative to `cwd` (the agent's), as folders to watch and one pattern. */
export function watchedGlobs(globs: unknown, cwd: string): WatchedGlobs {
  checkGlobs(globs);
  const absolute = globs
    .flatMap(expandBraces)
    // `src/` is the folder's files, as `src/**` (resolve would make it the name `src` alone).
    .map((glob) => toSlashes(resolve(cwd, glob.endsWith('/') ? `${glob}**` : glob)));
  const paths = [...new Set(absolute.map(literalPrefix))];
  // No glob matches nothing (an empty RegExp would match every file).
  const pattern = absolute.length ? new RegExp(absolute.map((glob) => `(?:${globSource(glob)})`).join('|')) : /(?!)/;
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

/** `src/{a,b}/**` → `src/a/**`, `src/b/**` (nested braces too), so every glob has one literal prefix. */
function expandBraces(glob: string): string[] {
  const open = glob.indexOf('{');
  if (open < 0) return [glob];
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < glob.length; i++) {
    const c = glob[i];
    if (c === '{') depth++;
    else if (c === ',' && depth === 1) commas.push(i);
    else if (c === '}' && --depth === 0) {
      const bounds = [open, ...commas, i];
      const before = glob.slice(0, open);
      const after = glob.slice(i + 1);
      return bounds.slice(1).flatMap((end, k) => expandBraces(`${before}${glob.slice(bounds[k]! + 1, end)}${after}`));
    }
  }
  // An unclosed brace is a literal one.
  return [glob];
}

/** The part of an absolute glob before its first wildcard name: what the watcher is given. */
function literalPrefix(glob: string): string {
  const names = glob.split('/');
  const first = names.findIndex((name) => WILDCARD.test(name));
  if (first < 0) return glob;
  return names.slice(0, first).join('/') || '/';
}

/** An absolute, brace-free glob as a RegExp source anchored at both ends. */
function globSource(glob: string): string {
  // The first name is the root: empty on POSIX (`/…`), a drive on Windows (`C:/…`).
  const [root = '', ...names] = glob.split('/');
  const parts = names.map((name) => (name === '**' ? '(?:/(?!\\.)[^/]+)*' : `/${nameSource(name)}`));
  return `^${escapeRegExp(root)}${parts.join('')}$`;
}

/** One name of a glob: `*` and `?` stay within it, and do not match a leading dot. */
function nameSource(name: string): string {
  let out = /^[*?[]/.test(name) ? '(?!\\.)' : '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '*') {
      while (name[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[' && name.indexOf(']', i + 2) > 0) {
      const end = name.indexOf(']', i + 2);
      const body = name.slice(i + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      out += `[${negated ? `^${escapeClass(body.slice(1))}` : escapeClass(body)}]`;
      i = end;
    } else out += escapeRegExp(c);
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.|+()[\]{}*?]/g, '\\$&');
}

function escapeClass(body: string): string {
  return body.replace(/[\\\]^]/g, '\\$&');
}

/** Windows paths as Vitest's watcher gives them (`/`-separated); on POSIX a backslash is part of a name. */
function toSlashes(path: string): string {
  return sep === '\\' ? path.split('\\').join('/') : path;
}
