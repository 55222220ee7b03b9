/**
 * fixtures/broken/: one storyboard per loader rule. Each file names, in a
 * comment, the rule it breaks and where: `# expect: <rule> @ <line>:<col>`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { STORYBOARD_RULES, loadStoryboard } from '../../src/storyboard/index.js';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/broken');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.storyboard.yaml'))
  .sort();
/** Loaded as the plugin loads a user's storyboard: against the installed corpus, so task names and requests are checked. */
const corpusRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../node_modules/@adcp/sdk/compliance/cache/3.0.6',
);

function expectation(source: string, file: string) {
  const match = /^# expect: (\w+) @ (\d+):(\d+)$/m.exec(source);
  if (!match) throw new Error(`${file}: missing "# expect: <rule> @ <line>:<col>" comment`);
  return { rule: match[1]!, line: Number(match[2]), column: Number(match[3]) };
}

describe('fixtures/broken', () => {
  it.each(files)('%s fails with the rule and position it names', (file) => {
    const source = readFileSync(path.join(dir, file), 'utf8');
    const expected = expectation(source, file);
    const result = loadStoryboard(source, file, { corpusRoot });
    expect(result.ok).toBe(false);
    const [primary] = result.diagnostics;
    expect({ rule: primary?.rule, line: primary?.line, column: primary?.column }).toEqual(expected);
    // Each file breaks one rule only, so each produces its own failure.
    expect(new Set(result.diagnostics.filter((d) => d.severity === 'error').map((d) => d.rule))).toEqual(
      new Set([expected.rule]),
    );
  });

  it('covers every error rule a storyboard file can break', () => {
    const covered = new Set(files.map((f) => expectation(readFileSync(path.join(dir, f), 'utf8'), f).rule));
    const notAboutStoryboardText = new Set(['file_unreadable', 'test_kit_shape']);
    const errorRules = Object.entries(STORYBOARD_RULES)
      .filter(([id, info]) => info.severity.startsWith('error') && !notAboutStoryboardText.has(id))
      .map(([id]) => id);
    expect(errorRules.filter((id) => !covered.has(id))).toEqual([]);
  });
});
