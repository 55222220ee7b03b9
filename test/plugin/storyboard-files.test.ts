/**
 * The globs the storyboard project's `include` gets for files named one by one (src/plugin/storyboard-files.ts
 * exactGlobs): the corpus files a run selects, the `files` option. Globbed here as Vitest globs a project's test files
 * (tinyglobby, absolute, from the project root): exactly the files given, whatever their names hold, one glob per
 * directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { glob } from 'tinyglobby';
import { afterEach, describe, expect, it } from 'vitest';
import { exactGlobs } from '../../src/plugin/storyboard-files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `names` made (empty) below a new directory; returns it. */
function tree(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'exact-globs-'));
  dirs.push(dir);
  for (const name of names) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), '');
  }
  return dir;
}

/** What Vitest's search for test files finds with these globs (test/specifications.ts: tinyglobby, as it calls it). */
const found = (root: string, include: string[]) =>
  glob(include, { absolute: true, dot: true, cwd: root, expandDirectories: false }).then((files) => files.sort());

describe('exactGlobs', () => {
  it('match exactly the files given, one glob per directory, below the root and outside it', async () => {
    const root = tree([
      'project/storyboards/a.yaml',
      'project/storyboards/b.yaml',
      'project/storyboards/not-me.yaml',
      'project/top.yaml',
      'corpus/universal/x.yaml',
      'corpus/universal/y.yaml',
      'corpus/universal/z.yaml',
      'corpus/protocols/p/index.yaml',
    ]);
    const project = join(root, 'project');
    const files = [
      join(project, 'storyboards/a.yaml'),
      join(project, 'storyboards/b.yaml'),
      join(project, 'top.yaml'),
      join(root, 'corpus/universal/x.yaml'),
      join(root, 'corpus/universal/z.yaml'),
      join(root, 'corpus/protocols/p/index.yaml'),
    ];
    const globs = exactGlobs(project, files);
    expect(globs).toHaveLength(4);
    expect(globs).toContain('storyboards/{a.yaml,b.yaml}');
    expect(globs).toContain('top.yaml');
    expect(await found(project, globs)).toEqual([...files].sort());
  });

  it('escape what a glob would read as a pattern: brackets, parentheses, braces, stars, a leading !; a comma keeps its own glob', async () => {
    const names = ['[id].yaml', 'a (copy).yaml', '{x}.yaml', 'star*.yaml', '!bang.yaml', 'one,two.yaml', 'plain.yaml'];
    const decoys = ['i.yaml', 'd.yaml', 'a copy.yaml', 'x.yaml', 'starry.yaml', 'one.yaml', 'two.yaml'];
    const root = tree([...names, ...decoys].map((n) => `weird (dir) [1]/${n}`));
    const files = names.map((n) => join(root, 'weird (dir) [1]', n));
    const globs = exactGlobs(root, files);
    expect(globs).toHaveLength(2);
    expect(await found(root, globs)).toEqual([...files].sort());
    // Outside the root: absolute, escaped the same way.
    const elsewhere = join(root, 'weird (dir) [1]');
    expect(await found(join(root, '..'), exactGlobs(join(elsewhere, 'nested-root'), files))).toEqual([...files].sort());
  });

  it('give nothing for no files', () => {
    expect(exactGlobs('/project', [])).toEqual([]);
  });
});
