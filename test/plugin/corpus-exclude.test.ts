/**
 * The storyboard project's exclude with the corpus let through (src/plugin/corpus-exclude.ts), matched as Vitest
 * matches it (picomatch, `dot: true`: its test-file glob; test/e2e/cli.test.ts runs the bin on a pnpm layout whole).
 */
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { excludeAllowingCorpus } from '../../src/plugin/corpus-exclude.js';

const VITEST_EXCLUDE = ['**/node_modules/**', '**/.git/**'];

/** The paths (from the root) the exclude drops. */
function dropped(exclude: string[], paths: string[]): string[] {
  const isExcluded = picomatch(exclude, { dot: true, posix: true });
  return paths.filter((path) => isExcluded(path));
}

describe('excludeAllowingCorpus', () => {
  it('npm: the corpus tree gets through, every other path below a node_modules stays out', () => {
    const exclude = excludeAllowingCorpus(VITEST_EXCLUDE, '/r/node_modules/@adcp/sdk/compliance/cache/3.0.6', '/r');
    const corpus = [
      'node_modules/@adcp/sdk/compliance/cache/3.0.6/universal/capability-discovery.yaml',
      'node_modules/@adcp/sdk/compliance/cache/3.0.6/protocols/media-buy/scenarios/x.yaml',
    ];
    const others = [
      'node_modules/vitest/index.js',
      'node_modules/.bin/vitest',
      'node_modules/@adcp/client/x.yaml',
      'node_modules/@adcp/sdk/dist/index.js',
      'node_modules/@adcp/sdk/compliance/cache/3.1.15/universal/capability-discovery.yaml',
      'node_modules/@adcp/sdk/compliance/cache/3.0.6/node_modules/x/a.yaml',
      'packages/app/node_modules/@adcp/sdk/compliance/cache/3.0.6/universal/capability-discovery.yaml',
      'node_modules/@adcp/sdk/compliance/cache/3x0y6/universal/capability-discovery.yaml',
      '.git/config',
    ];
    const own = ['storyboards/a.storyboard.yaml', 'nodes/a.storyboard.yaml', 'node_modulesx/a.storyboard.yaml'];
    expect(dropped(exclude, [...corpus, ...others, ...own])).toEqual(others);
    // What replaces the node_modules entry is about node_modules only: nothing else of the project is dropped by it.
    const added = exclude.filter((pattern) => !VITEST_EXCLUDE.includes(pattern));
    expect(added.length).toBeGreaterThan(0);
    for (const pattern of added) expect(pattern.split('/'), pattern).toContain('node_modules');
  });

  it("pnpm: the SDK's real path under node_modules/.pnpm (what Node and Vitest resolve) gets through", () => {
    const root = '/r';
    const corpusRoot = '/r/node_modules/.pnpm/@adcp+sdk@6.11.0/node_modules/@adcp/sdk/compliance/cache/3.0.6';
    const exclude = excludeAllowingCorpus(VITEST_EXCLUDE, corpusRoot, root);
    const corpus = [`${corpusRoot.slice(3)}/universal/capability-discovery.yaml`];
    const others = [
      'node_modules/.pnpm/vitest@4.1.12/node_modules/vitest/index.js',
      'node_modules/.pnpm/@adcp+sdk@6.10.0/node_modules/@adcp/sdk/compliance/cache/3.0.6/universal/a.yaml',
      'node_modules/.pnpm/@adcp+sdk@6.11.0/node_modules/zod/index.js',
      'node_modules/.pnpm/@adcp+sdk@6.11.0/package.json',
      'node_modules/vitest/index.js',
      'node_modules/@adcp/sdk/compliance/cache/3.0.6/universal/capability-discovery.yaml',
    ];
    expect(dropped(exclude, [...corpus, ...others])).toEqual(others);
    // The pattern that stood before let node_modules/@adcp through, and so dropped .pnpm and the corpus in it.
    expect(dropped(['**/node_modules/!(@adcp)/**'], corpus)).toEqual(corpus);
  });

  it('a workspace package: the corpus of its node_modules gets through, the root node_modules stays out', () => {
    const exclude = excludeAllowingCorpus(
      VITEST_EXCLUDE,
      '/r/packages/agent/node_modules/@adcp/sdk/compliance/cache/3.1.15',
      '/r',
    );
    const corpus = ['packages/agent/node_modules/@adcp/sdk/compliance/cache/3.1.15/universal/a.yaml'];
    const others = [
      'node_modules/@adcp/sdk/compliance/cache/3.1.15/universal/a.yaml',
      'packages/node_modules/x.js',
      'packages/agent/node_modules/vitest/index.js',
      'packages/other/node_modules/@adcp/sdk/compliance/cache/3.1.15/universal/a.yaml',
      'apps/x/node_modules/y.yaml',
    ];
    expect(dropped(exclude, [...corpus, ...others, 'packages/agent/src/a.storyboard.yaml'])).toEqual(others);
  });

  it('leaves the exclude as it is for a corpus outside the root or outside any node_modules, and without the entry', () => {
    const custom = ['**/node_modules/**', 'dist/**', '**/.git/**'];
    expect(excludeAllowingCorpus(custom, '/r', '/r')).toEqual(custom);
    expect(excludeAllowingCorpus(custom, '/sdk/node_modules/@adcp/sdk/compliance/cache/3.1.15', '/r')).toEqual(custom);
    expect(excludeAllowingCorpus(custom, '/r/corpus/3.1.15', '/r')).toEqual(custom);
    expect(excludeAllowingCorpus(['dist/**'], '/r/node_modules/@adcp/sdk/compliance/cache/3.0.6', '/r')).toEqual([
      'dist/**',
    ]);
  });

  it("keeps the user's other entries, in place, and never changes the array it is given", () => {
    const custom = ['dist/**', '**/node_modules/**', '**/.git/**'];
    const exclude = excludeAllowingCorpus(custom, '/r/node_modules/@adcp/sdk/compliance/cache/3.0.6', '/r');
    expect(exclude[0]).toBe('dist/**');
    expect(exclude.at(-1)).toBe('**/.git/**');
    expect(exclude).not.toContain('**/node_modules/**');
    expect(custom).toEqual(['dist/**', '**/node_modules/**', '**/.git/**']);
  });

  it('a folder name with glob characters stands for itself', () => {
    const exclude = excludeAllowingCorpus(VITEST_EXCLUDE, '/r/node_modules/a(b)[c]{d}!e*f?g+h@i|j/3.0.6', '/r');
    const corpus = ['node_modules/a(b)[c]{d}!e*f?g+h@i|j/3.0.6/x.yaml'];
    const others = ['node_modules/abcdefghij/3.0.6/x.yaml', 'node_modules/a(b)[c]{d}!e*f?g+h@i|j/3x0y6/x.yaml'];
    expect(dropped(exclude, [...corpus, ...others])).toEqual(others);
  });
});
