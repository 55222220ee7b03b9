/**
 * `agent.start.watch`'s globs (src/plugin/watch-globs.ts): the folders handed to Vite's watcher, and the one pattern
 * Vitest's `watchTriggerPatterns` matches a changed file against (an absolute, `/`-separated path).
 */
import { describe, expect, it } from 'vitest';
import { watchedGlobs } from '../../src/plugin/watch-globs.js';

const matching = (globs: string[], files: string[]) => {
  const { pattern } = watchedGlobs(globs, '/repo/agent');
  return files.filter((file) => pattern.test(file));
};

describe('agent.start.watch globs', () => {
  it('resolves each glob against the agent cwd and watches the folder before its first wildcard', () => {
    expect(
      watchedGlobs(['src/**', 'lib/*.ts', '../shared/{a,b}/**/*.js', '/etc/agent.json'], '/repo/agent').paths,
    ).toEqual(['/repo/agent/src', '/repo/agent/lib', '/repo/shared', '/etc/agent.json']);
  });

  it('`**` spans folders (none included), `*` and `?` stay within a name, `[…]` and `{…}` choose', () => {
    expect(
      matching(
        ['src/**', 'lib/*.ts', 'cfg/?.json', 'x/[ab].mjs', 'y/{one,two/deep}/*.js'],
        [
          '/repo/agent/src',
          '/repo/agent/src/server.ts',
          '/repo/agent/src/a/b/c.ts',
          '/repo/agent/srcx/server.ts',
          '/repo/agent/lib/a.ts',
          '/repo/agent/lib/a/b.ts',
          '/repo/agent/cfg/1.json',
          '/repo/agent/cfg/12.json',
          '/repo/agent/x/a.mjs',
          '/repo/agent/x/c.mjs',
          '/repo/agent/y/one/a.js',
          '/repo/agent/y/two/deep/a.js',
          '/repo/agent/y/two/a.js',
        ],
      ),
    ).toEqual([
      '/repo/agent/src',
      '/repo/agent/src/server.ts',
      '/repo/agent/src/a/b/c.ts',
      '/repo/agent/lib/a.ts',
      '/repo/agent/cfg/1.json',
      '/repo/agent/x/a.mjs',
      '/repo/agent/y/one/a.js',
      '/repo/agent/y/two/deep/a.js',
    ]);
  });

  it("a wildcard skips names that start with a dot (an editor's swap file), a named dot does not; `dir/` is `dir/**`", () => {
    expect(
      matching(
        ['src/', '.env', 'conf/**/.rc'],
        [
          '/repo/agent/src/.server.ts.swp',
          '/repo/agent/src/.git/HEAD',
          '/repo/agent/src/server.ts',
          '/repo/agent/.env',
          '/repo/agent/conf/a/.rc',
        ],
      ),
    ).toEqual(['/repo/agent/src/server.ts', '/repo/agent/.env', '/repo/agent/conf/a/.rc']);
  });

  it('takes regular-expression characters that are not glob syntax literally (picomatch: `(`, `+(` are extglobs)', () => {
    expect(matching(['a.b/x$y^.ts'], ['/repo/agent/a.b/x$y^.ts', '/repo/agent/aab/xy.ts'])).toEqual([
      '/repo/agent/a.b/x$y^.ts',
    ]);
  });

  it('refuses what is not a list of globs, and negation, with the fix', () => {
    expect(() => watchedGlobs('src/**', '/r')).toThrow(
      `agent.start.watch is "src/**": give the agent's source as globs relative to agent.start.cwd, e.g. watch: ['src/**/*.ts']`,
    );
    expect(() => watchedGlobs(['src/**', '!src/gen/**'], '/r')).toThrow(
      'agent.start.watch has "!src/gen/**": give the agent\'s source as globs',
    );
    expect(() => watchedGlobs([''], '/r')).toThrow('agent.start.watch has "":');
    expect(watchedGlobs([], '/r').paths).toEqual([]);
  });
});
