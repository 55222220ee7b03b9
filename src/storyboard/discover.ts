/**
 * Which YAML files are storyboards. A compliance tree also holds test kits,
 * test vectors, the format description (`universal/storyboard-schema.yaml`,
 * only comments), the runner output contract and entity catalogues. A file is
 * a storyboard when it is named `*.storyboard.yaml` (authoring convention of
 * this package) or declares a top-level `phases:` key.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_STORYBOARD_BOUNDS, fileBytesOverBound } from './bounds.js';

const STORYBOARD_NAME = /\.storyboard\.ya?ml$/;
const YAML_NAME = /\.ya?ml$/;
/** Directories of a compliance tree that never hold storyboards. */
const NON_STORYBOARD_DIRS = new Set(['test-kits', 'test-vectors', 'node_modules']);

/** Cheap test on the text: a `phases:` key at column 0 (a top-level key in block style). */
export function isStoryboardSource(source: string, file?: string): boolean {
  if (file && STORYBOARD_NAME.test(file)) return true;
  return /^phases[ \t]*:/m.test(source);
}

/**
 * The text to look for `phases:` in: the whole file, or of a file over the default byte bound its first that many
 * bytes (a huge YAML is not read whole to find out; if it is a storyboard, loading it says it is too big).
 */
function head(file: string): string {
  if (fileBytesOverBound(file, undefined) === undefined) return readFileSync(file, 'utf8');
  const buffer = Buffer.alloc(DEFAULT_STORYBOARD_BOUNDS.maxBytes);
  const fd = openSync(file, 'r');
  try {
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
  } finally {
    closeSync(fd);
  }
}

/** Storyboard files under `dir`, recursively, sorted, as absolute paths. */
export function findStoryboardFiles(dir: string): string[] {
  const found: string[] = [];
  const visit = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !NON_STORYBOARD_DIRS.has(entry.name)) visit(full);
      } else if (YAML_NAME.test(entry.name) && isStoryboardSource(head(full), full)) {
        found.push(full);
      }
    }
  };
  visit(path.resolve(dir));
  return found.sort();
}
