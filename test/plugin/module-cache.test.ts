/**
 * Vitest's module cache for compiled storyboards (src/plugin/module-cache.ts): which modules get our key and which are
 * never kept, the key as a function of the module this run makes, and what the storyboard project is given by Vitest
 * version. The runs that read and write the cache: test/e2e/caches.test.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestProject, VitestPluginContext } from 'vitest/node';
import { CompileCache, type CachedCompile } from '../../src/compile/compile-cache.js';
import { privateUserDir } from '../../src/cache/disk-cache.js';
import { defineModuleCacheKeys, moduleCacheKey, moduleCacheSettings } from '../../src/plugin/module-cache.js';
import { createState, DATA_QUERY, type PluginState } from '../../src/plugin/state.js';
import { loadForRun, transformStoryboard, warmUp } from '../../src/plugin/storyboard-modules.js';
import { StoredStoryboards, storedStoryboardsDir, storyboardDigest } from '../../src/cache/stored-storyboards.js';
import { repoRoot } from '../helpers/run-vitest.js';

const scratch = mkdtempSync(join(tmpdir(), 'adcp-module-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const corpus = join(scratch, 'corpus');
mkdirSync(join(corpus, 'universal'), { recursive: true });
const inCorpus = join(corpus, 'universal', 'discovery.yaml');
const yours = join(scratch, 'mine', 'flow.storyboard.yaml');

const compile = (code: string, extra: Partial<CachedCompile> = {}): CachedCompile => ({
  code,
  map: { version: 3, mappings: 'AAAA', sources: [], names: [] } as never,
  diagnostics: [],
  ...extra,
});

function stateWith(cacheDir?: string): PluginState {
  const state = createState({});
  state.explicit.add(inCorpus);
  state.kitRoot = corpus;
  if (cacheDir) state.compileCache = new CompileCache(cacheDir, JSON.stringify({ kitRoot: corpus }));
  return state;
}

/** The run host's compile of `file` for this text (storyboard-modules.ts compileForRun). */
const hosted = (state: PluginState, file: string, text: string, result: CachedCompile, mode = 'tests') =>
  state.recentCompiles.set(`${mode}\0${file}`, { code: text, result });

describe('the module-cache key', () => {
  it('adds nothing to a module that is not a storyboard', () => {
    const state = stateWith();
    expect(moduleCacheKey(state, join(scratch, 'src', 'a.ts'), 'export {}')).toBeUndefined();
    expect(moduleCacheKey(state, join(scratch, 'config.yaml'), 'a: 1')).toBeUndefined();
  });

  it('is the digest of the module this run compiled: the same compile, the same key; another, another', () => {
    const state = stateWith();
    hosted(state, inCorpus, 'text', compile('module A'));
    const a = moduleCacheKey(state, inCorpus, 'text');
    expect(a).toMatch(/^vitest-adcp:[0-9a-f]{64}$/);
    expect(moduleCacheKey(state, inCorpus, 'text')).toBe(a);
    hosted(state, inCorpus, 'text', compile('module B'));
    const b = moduleCacheKey(state, inCorpus, 'text');
    hosted(state, inCorpus, 'text', compile('module A', { map: { version: 3, mappings: 'AACA' } as never }));
    const remapped = moduleCacheKey(state, inCorpus, 'text');
    expect(new Set([a, b, remapped]).size).toBe(3);
  });

  it('takes the compile cache entry when the run host made no compile of that text, and checks it', () => {
    const dir = join(scratch, 'cache1');
    const state = stateWith(dir);
    const cache = state.compileCache!;
    // No compile anywhere: not kept (the transform compiles it, and stores it for the next run).
    expect(moduleCacheKey(state, inCorpus, 'stored text')).toBe(false);
    cache.store(cache.key(inCorpus, 'tests\0stored text'), compile('stored module'));
    const fromCache = moduleCacheKey(state, inCorpus, 'stored text');
    hosted(state, inCorpus, 'stored text', compile('stored module'));
    expect(moduleCacheKey(state, inCorpus, 'stored text')).toBe(fromCache);
    // The run host's compile of another text is not this one's.
    hosted(state, inCorpus, 'older text', compile('older module'));
    expect(moduleCacheKey(state, inCorpus, 'stored text')).toBe(fromCache);
    // A data module (a storyboard imported by a test) is its own entry.
    expect(moduleCacheKey(state, `${inCorpus}?${DATA_QUERY}`, 'stored text')).toBe(false);
    hosted(state, inCorpus, 'stored text', compile('data module'), 'data');
    const data = moduleCacheKey(state, `${inCorpus}?${DATA_QUERY}`, 'stored text');
    expect(data).toMatch(/^vitest-adcp:/);
    expect(data).not.toBe(fromCache);
  });

  it('keeps no storyboard of yours, none over the byte bound, none with a load warning or error', () => {
    const state = stateWith();
    state.explicit.add(yours);
    hosted(state, yours, 'text', compile('module'));
    expect(moduleCacheKey(state, yours, 'text')).toBe(false);
    hosted(state, inCorpus, 'text', compile('module'));
    expect(moduleCacheKey(state, inCorpus, 'text')).toMatch(/^vitest-adcp:/);
    state.refused.add(inCorpus);
    expect(moduleCacheKey(state, inCorpus, 'text')).toBe(false);
    state.refused.delete(inCorpus);
    for (const severity of ['warning', 'error'] as const) {
      const diagnostic = { severity, rule: 'r', message: 'm', file: inCorpus, line: 1, column: 1 };
      hosted(state, inCorpus, 'text', compile('module', { diagnostics: [diagnostic] }));
      expect(moduleCacheKey(state, inCorpus, 'text'), severity).toBe(false);
    }
    // No corpus known: nothing is vouched for.
    state.kitRoot = undefined;
    hosted(state, inCorpus, 'text', compile('module'));
    expect(moduleCacheKey(state, inCorpus, 'text')).toBe(false);
  });
});

type Generator = (context: { id: string; sourceCode: string }) => string | false | undefined;

/** A `configureVitest` context of a Vitest version: 5 (`defineCacheKeyGenerator`), 4.0.11+ (`experimental_…`), older. */
function contextOf(version: 5 | 4 | 3, root = repoRoot) {
  const generators: Generator[] = [];
  const define = (generator: Generator) => generators.push(generator);
  const api =
    version === 5
      ? { defineCacheKeyGenerator: define, experimental_defineCacheKeyGenerator: define }
      : version === 4
        ? { experimental_defineCacheKeyGenerator: define }
        : {};
  return { context: { ...api, project: { config: { root } } } as unknown as VitestPluginContext, generators };
}

describe.skipIf(process.platform === 'win32')('the storyboard a module names by digest', () => {
  const json = JSON.stringify({ id: 'discovery', phases: [] });
  const digest = storyboardDigest(json);
  const named = compile(`storyboardStored("${digest}")`, { storyboard: json, dataDigest: digest });

  it('is stored again when Vitest serves the module from its cache (the key), or Vite transforms it, after its removal', () => {
    const state = stateWith();
    const env = { XDG_CACHE_HOME: join(scratch, 'stored') };
    state.storedStoryboards = StoredStoryboards.open(env);
    const entry = join(storedStoryboardsDir(env), `${digest}.json`);
    hosted(state, inCorpus, 'text', named);
    expect(moduleCacheKey(state, inCorpus, 'text')).toMatch(/^vitest-adcp:/);
    expect(state.storedStoryboards!.read(digest)).toBe(json);
    rmSync(entry);
    moduleCacheKey(state, inCorpus, 'text');
    expect(state.storedStoryboards!.read(digest)).toBe(json);
    rmSync(entry);
    const transformed = transformStoryboard({ warn: () => {}, addWatchFile: () => {} }, state, 'text', inCorpus);
    expect(transformed?.code).toBe(named.code);
    expect(state.storedStoryboards!.read(digest)).toBe(json);
  });

  it('with no store (none could be opened) stops the run with what to do, rather than a worker failing to find it', () => {
    const state = stateWith();
    hosted(state, inCorpus, 'text', named);
    expect(() => moduleCacheKey(state, inCorpus, 'text')).toThrow(
      new RegExp(
        `could not write the compiled storyboard to ${storedStoryboardsDir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} .*cacheDir: false`,
      ),
    );
  });

  it('that cannot be stored stops the run with what to do, rather than a worker failing to find it', () => {
    const state = stateWith();
    const env = { XDG_CACHE_HOME: join(scratch, 'unwritable') };
    state.storedStoryboards = StoredStoryboards.open(env);
    rmSync(storedStoryboardsDir(env), { recursive: true });
    writeFileSync(storedStoryboardsDir(env), '');
    hosted(state, inCorpus, 'text', named);
    expect(() => moduleCacheKey(state, inCorpus, 'text')).toThrow(
      /could not write the compiled storyboard to .*unwritable.*cacheDir: false/,
    );
  });
});

describe('the storyboard project and Vitest', () => {
  const modules = join(scratch, 'user-cache', 'modules');

  it('Vitest 4: the cache on in the private modules directory, one generator for every project', () => {
    const state = stateWith();
    const { context, generators } = contextOf(4);
    expect(moduleCacheSettings(state, context, () => modules)).toEqual({
      experimental: { fsModuleCache: true, fsModuleCachePath: modules },
    });
    expect(state.moduleCacheOn).toBe(true);
    defineModuleCacheKeys(state, context);
    defineModuleCacheKeys(state, context);
    expect(generators).toHaveLength(1);
    hosted(state, inCorpus, 'text', compile('module'));
    expect(generators[0]!({ id: inCorpus, sourceCode: 'text' })).toBe(moduleCacheKey(state, inCorpus, 'text'));
  });

  it('no module cache with cacheDir: false, outside any package, without a private directory, or before Vitest 4.0.11', () => {
    for (const [state, version, dir, root] of [
      [Object.assign(stateWith(), { options: { cacheDir: false } }), 4, modules, repoRoot],
      [stateWith(), 4, modules, '/'],
      [stateWith(), 4, undefined, repoRoot],
      [stateWith(), 3, modules, repoRoot],
    ] as const) {
      const { context } = contextOf(version, root);
      expect(moduleCacheSettings(state, context, () => dir)).toEqual({});
      expect(state.moduleCacheOn).toBeUndefined();
    }
    const { context, generators } = contextOf(3);
    defineModuleCacheKeys(stateWith(), context);
    expect(generators).toHaveLength(0);
  });

  it("Vitest 5: the storyboard project's cache off (no generator reaches it); yours gets the key, per project", () => {
    const state = stateWith();
    const { context, generators } = contextOf(5);
    expect(moduleCacheSettings(state, context, () => modules)).toEqual({ fsModuleCache: false });
    expect(state.moduleCacheOn).toBeUndefined();
    defineModuleCacheKeys(state, context);
    defineModuleCacheKeys(state, context);
    expect(generators).toHaveLength(2);
  });
});

describe.skipIf(process.platform === 'win32')("the modules' directory", () => {
  it("is in this user's cache directory, and only while no one else can write there", () => {
    const env = { XDG_CACHE_HOME: join(scratch, 'xdg') };
    const dir = privateUserDir('modules', env);
    expect(dir).toBe(join(scratch, 'xdg', 'vitest-adcp', 'modules'));
    expect(statSync(dir!).mode & 0o777).toBe(0o700);
    chmodSync(dir!, 0o775);
    expect(privateUserDir('modules', env)).toBeUndefined();
    chmodSync(dir!, 0o755);
    expect(privateUserDir('modules', env)).toBe(dir);
    chmodSync(join(dir!, '..'), 0o777);
    expect(privateUserDir('modules', env)).toBeUndefined();
    chmodSync(join(dir!, '..'), 0o700);
    // A link in its place (to a directory others share) is not it.
    rmSync(dir!, { recursive: true });
    mkdirSync(join(scratch, 'shared'), { mode: 0o700 });
    symlinkSync(join(scratch, 'shared'), dir!);
    expect(privateUserDir('modules', env)).toBeUndefined();
  });
});

describe("the main process's warm-up of the run's modules", () => {
  /** The files a warm-up transforms, in order (storyboard-modules.ts warmUp, through the SSR environment). */
  async function warmed(state: PluginState): Promise<string[]> {
    const requested: string[] = [];
    const project = {
      vite: { environments: { ssr: { warmupRequest: async (file: string) => void requested.push(file) } } },
    } as unknown as TestProject;
    warmUp(state, project);
    await new Promise((resolve) => setTimeout(resolve, 10));
    return requested;
  }

  it('with the module cache on, leaves out the files an earlier run compiled (the cache serves them)', async () => {
    const state = stateWith();
    const fresh = join(corpus, 'universal', 'fresh.yaml');
    state.explicit.add(fresh);
    state.compiledBefore.add(inCorpus);
    expect(await warmed(state)).toEqual([inCorpus, fresh]);
    state.moduleCacheOn = true;
    expect(await warmed(state)).toEqual([fresh]);
  });
});

describe('which files an earlier run compiled', () => {
  it("are those whose compile the compile cache served this run (the run host's load of each)", () => {
    const dir = join(scratch, 'cache-before');
    const file = join(corpus, 'universal', 'real.yaml');
    writeFileSync(file, readFileSync(join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml')));
    const first = stateWith(dir);
    expect(loadForRun(first, file)).toBeDefined();
    expect([...first.compiledBefore]).toEqual([]);
    const second = stateWith(dir);
    expect(loadForRun(second, file)).toBeDefined();
    expect([...second.compiledBefore]).toEqual([file]);
  });
});
