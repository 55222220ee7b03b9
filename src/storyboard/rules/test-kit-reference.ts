/**
 * `prerequisites.test_kit` should name a file that exists. Checked only when
 * the caller says where the compliance tree is (`corpusRoot`), and only as a
 * warning: users normally run storyboards with their own test kit (their
 * agent's credentials), configured outside the storyboard.
 */
import { existsSync } from 'node:fs';
import { isPlainObject } from '../paths.js';
import { resolveTestKitPath } from '../test-kit.js';
import type { RuleContext } from './model.js';

export function checkTestKitReference(ctx: RuleContext): void {
  if (!ctx.corpusRoot) return;
  const prerequisites = ctx.root.prerequisites;
  if (!isPlainObject(prerequisites) || typeof prerequisites.test_kit !== 'string') return;
  const ref = prerequisites.test_kit;
  const resolved = resolveTestKitPath(ref, { storyboardFile: ctx.file, corpusRoot: ctx.corpusRoot });
  if (existsSync(resolved)) return;
  ctx.sink.warning(
    'test_kit_not_found',
    ctx.at(['prerequisites', 'test_kit']),
    `test kit "${ref}" not found (looked for ${resolved})`,
    'paths are relative to the compliance tree root (e.g. "test-kits/acme-outdoor.yaml"), or to this file when they start with ./ or ../',
  );
}
