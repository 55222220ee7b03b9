/**
 * The titles compiled storyboard modules give their tests (compile/compile.ts), and their reading back by the
 * reporters, which see titles, not the storyboard: one place for both directions.
 */
import { sanitizeOutput } from './redact.js';

/**
 * `Title (id)`: the human title with the stable id, so `vitest -t <id>` selects it. Titles come from the storyboard's
 * YAML and every reporter prints them: through the output sanitiser (no raw ESC, no line a CI log parser reads as a
 * command; a newline stays, as the storyboard wrote it).
 */
export function testTitle(title: string | undefined, id: string): string {
  return title && title !== id ? `${sanitizeOutput(title)} (${sanitizeOutput(id)})` : sanitizeOutput(id);
}

/**
 * Whether a test title is the one testTitle gives the node with this id (`Title (id)`, or `id`).
 *
 * @public jest/reporter.cts uses it through `require(…) as typeof import(…)`, whose members knip does not follow.
 */
export function isTitleOf(title: string, id: string): boolean {
  id = sanitizeOutput(id);
  return title === id || title.endsWith(` (${id})`);
}

/** The start of the one test a storyboard file that does not load compiles to: `loads without errors (<rule>)`. */
export const LOAD_FAILURE_TITLE = 'loads without errors';

/** Whether a test is that one: its title, in a YAML module. */
export function isLoadFailureTest(file: string, title: string): boolean {
  return /\.ya?ml$/.test(file) && title.startsWith(LOAD_FAILURE_TITLE);
}
