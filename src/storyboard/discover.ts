/**
 * Which YAML files are storyboards. A compliance tree also holds test kits,
 * test vectors, the format description (`universal/storyboard-schema.yaml`,
 * only comments), the runner output contract and entity catalogues. A file is
 * a storyboard when it is named `*.storyboard.yaml` (authoring convention of
 * this package) or declares a top-level `phases:` key.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readStoryboardHead } from './read.js';

const STORYBOARD_NAME = /\.storyboard\.ya?ml$/;
const YAML_NAME = /\.ya?ml$/;
/** Directories of a compliance tree that never hold storyboards. */
const NON_STORYBOARD_DIRS = new Set(['test-kits', 'test-vectors', 'node_modules']);

/** Cheap test on the text: a `phases:` key at column 0 (a top-level key in block style). */
export function isStoryboardSource(source: string, file?: string): boolean {
  if (file && STORYBOARD_NAME.test(file)) return true;
  return /^phases[ \t]*:/m.test(source);
}

/** Storyboard files under `dir`, recursively, sorted, as absolute paths. */
export function findStoryboardFiles(dir: string): string[] {
  const found: string[] = [];
  const visit = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !NON_STORYBOARD_DIRS.has(entry.name)) visit(full);
      } else if (YAML_NAME.test(entry.name) && isStoryboardSource(readStoryboardHead(full).text, full)) {
        found.push(full);
      }
    }
  };
  visit(path.resolve(dir));
  return found.sort();
}
