/**
 * The storyboard project's `exclude` with the selected corpus let through.
 *
 * Vitest's default exclude drops everything under any `node_modules` (its entry `NODE_MODULES_ENTRY`), where the corpus
 * of `@adcp/sdk` lives. That one entry is replaced by patterns that drop the same paths except the corpus tree and the
 * folders on the way to it: nothing else below a `node_modules` gets through (another package, another copy of the
 * SDK, a `node_modules` inside the corpus).
 *
 * The patterns follow the corpus's whole path from the project root, segment by segment, not only its part after the
 * last `node_modules`: under pnpm the SDK's real path (the one Node and Vitest resolve) is
 * `node_modules/.pnpm/@adcp+sdk@<version>/node_modules/@adcp/sdk/…`, and a pattern for "any `node_modules` but
 * `node_modules/@adcp`" drops `.pnpm` and so the corpus with it (no storyboard was found). A corpus outside the project
 * root (a path given with `..`) is not below the root's `node_modules`, and the entry stays as it is: the walk of the
 * project's own storyboard files then never enters its `node_modules`.
 */
import { isAbsolute, relative } from 'node:path';

const NODE_MODULES_ENTRY = '**/node_modules/**';

/** `exclude` with its `NODE_MODULES_ENTRY` narrowed to let `corpusRoot` through (a new array). */
export function excludeAllowingCorpus(exclude: readonly string[], corpusRoot: string, root: string): string[] {
  const rel = relative(root, corpusRoot).split('\\').join('/');
  const index = exclude.indexOf(NODE_MODULES_ENTRY);
  if (index === -1 || rel.startsWith('..') || isAbsolute(rel)) return [...exclude];
  const parts = rel.split('/');
  if (!parts.includes('node_modules')) return [...exclude];
  return [...exclude.slice(0, index), ...allExcept(parts), ...exclude.slice(index + 1)];
}

/**
 * Patterns matching every path below a `node_modules` except the folders of `parts` (a path from the root) and what is
 * below them. Each pattern covers the paths that follow `parts` up to a segment and leave it there.
 */
function allExcept(parts: readonly string[]): string[] {
  const patterns: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const on = parts.slice(0, i).map(literal);
    const at = (...rest: string[]) => [...on, ...rest].join('/');
    const leaving = `!(${literal(parts[i]!)})`;
    if (parts.slice(0, i).includes('node_modules')) {
      // Already below a node_modules: leaving the path here is leaving into something else of it.
      patterns.push(at(leaving, '**'));
    } else {
      // Not yet: what leaves the path is dropped where it is, or goes through, a node_modules of its own.
      if (parts[i] !== 'node_modules') patterns.push(at('node_modules', '**'));
      patterns.push(at(leaving, '**', 'node_modules', '**'));
    }
  }
  // A node_modules inside the corpus tree.
  patterns.push([...parts.map(literal), '**', 'node_modules', '**'].join('/'));
  return patterns;
}

/** A path segment as a glob matching only itself: picomatch's special characters escaped. */
function literal(segment: string): string {
  return segment.replace(/[\\*?[\]{}()!+@|.]/g, (c) => `\\${c}`);
}
