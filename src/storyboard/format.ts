/**
 * Which storyboard format a file is written in, and what the loader does with keys and checks it does not know.
 *
 * The format vitest-adcp implements is AdCP 3.1's (schema/storyboard.schema.json, src/checks/kinds.ts): a superset
 * of 3.0's, and the 3.0 line's later patches (3.0.26) already carry 3.1 keys, so one format serves every corpus up
 * to 3.1. A storyboard of a newer minor (3.2 beta under this 3.1 runner) is loaded under the runner-output contract's
 * forward-compatibility rules: every unknown key is a warning naming it, an unknown check kind a warning — and is
 * graded as the contract says (passed, with a note on the coverage gap: engine/grade.ts). A file's format version
 * is its corpus's `index.json` `adcp_version` when it lies in the compliance tree; a user's own storyboard is
 * written for the format this package implements, and `strictKeys` keeps its meaning for it.
 */
import { readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { FORMAT_MINORS } from '../checks/kinds.js';

/** The newest storyboard format implemented: AdCP minor. */
const IMPLEMENTED_FORMAT = FORMAT_MINORS[FORMAT_MINORS.length - 1]!;

/**
 * What the loader does with a key or check kind the format does not define:
 * - `strict`: an error, with the key meant (the default: a typo would silently disable what it names);
 * - `lenient` (`strictKeys: false`): near misses of known keys are warnings, other keys are kept;
 * - `forward` (a storyboard of a newer format): every unknown key and kind is a warning naming it.
 */
export type KeyPolicy = 'strict' | 'lenient' | 'forward';

/** `3.2.0-beta.5` → [3, 2]; undefined for anything that is not a version. */
function minorOf(version: string): [number, number] | undefined {
  const match = /^(\d+)\.(\d+)/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/**
 * Whether a storyboard written for `formatVersion` (undefined: a storyboard outside any compliance tree, read as the
 * newest format) has a feature of format `since` (a minor, e.g. `3.1`).
 */
export function formatHas(formatVersion: string | undefined, since: string): boolean {
  const theirs = formatVersion === undefined ? undefined : minorOf(formatVersion);
  const needed = minorOf(since)!;
  if (!theirs) return true;
  return theirs[0] > needed[0] || (theirs[0] === needed[0] && theirs[1] >= needed[1]);
}

/** Whether `version` (an AdCP version or minor) is newer than the format this package implements. */
function newerThanImplemented(version: string | undefined): boolean {
  const mine = minorOf(IMPLEMENTED_FORMAT)!;
  const theirs = version === undefined ? undefined : minorOf(version);
  if (!theirs) return false;
  return theirs[0] > mine[0] || (theirs[0] === mine[0] && theirs[1] > mine[1]);
}

export function keyPolicy(strictKeys: boolean, formatVersion: string | undefined): KeyPolicy {
  if (newerThanImplemented(formatVersion)) return 'forward';
  return strictKeys ? 'strict' : 'lenient';
}

const corpusVersions = new Map<string, string | undefined>();

/**
 * The AdCP version a storyboard file is written for: its compliance tree's `index.json` `adcp_version` when the file
 * lies under `corpusRoot`; else undefined (a user's storyboard: the implemented format).
 */
export function formatVersionOf(file: string, corpusRoot: string | undefined): string | undefined {
  if (!corpusRoot) return undefined;
  const root = resolve(corpusRoot);
  const rel = relative(root, resolve(file));
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep) || /^[A-Za-z]:/.test(rel)) return undefined;
  if (!corpusVersions.has(root)) {
    let version: string | undefined;
    try {
      const index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8')) as { adcp_version?: unknown };
      version = typeof index.adcp_version === 'string' ? index.adcp_version : undefined;
    } catch {
      version = undefined;
    }
    corpusVersions.set(root, version);
  }
  return corpusVersions.get(root);
}

/** How a forward-compatibility warning names the format gap. */
export function forwardNote(formatVersion: string | undefined): string {
  return `this storyboard is written for AdCP ${formatVersion ?? 'a newer version'}, and vitest-adcp implements the ${IMPLEMENTED_FORMAT} format`;
}
