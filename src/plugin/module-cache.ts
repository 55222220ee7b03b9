/**
 * Vitest's module cache for compiled storyboards (`fsModuleCache`: each transformed module kept on disk and served to
 * the next run without Vite's transform pipeline), and the part of its key Vitest cannot know.
 *
 * Why the storyboard project turns it on: a warm run of the 3.1.15 corpus (90 storyboard modules, the bin, an SDK 13
 * seller 50 ms away) spent ~0.7 s of its main process in Vite's pipeline for modules whose text had not changed —
 * rolldown's hooks, the SSR parse, source-map composition — and held ~100 MB more for it. Served from the cache,
 * measured paired (6 runs each): peak RSS 219 vs 315 MB, CPU 0.93 (docs/benchmarks.md).
 *
 * Why it needs a key of ours: Vitest keys a module by its id, its text and its environment's config (root, plugin
 * names, the config file's text). A compiled storyboard also depends on what that does not cover: this package's code
 * (an install by link or from a clone changes no lockfile), the plugin's options when the bin gives them (no config
 * file), the corpus's schemas, signing vectors and test kits. So `moduleCacheKey` adds the module this package makes
 * of the file — the compiled code and its source map's mappings, as one digest: what Vitest keeps is then what Vite
 * made of exactly the module this run would hand it. That compile is the one the run host made this run (it runs the
 * storyboard the module embeds or names), or the compile cache's entry (compile/compile-cache.ts, keyed by every input
 * of the compile and checked as it is read): the key costs a digest, never a compile. Never kept: a storyboard of yours (its
 * transform also tells Vite which test kit of yours to watch, which a cached module skips), one over the byte bound,
 * one that failed to load, one with load warnings (Vite prints them during that transform too), and one neither the
 * run host nor the compile cache has a compile of.
 *
 * Which Vitest: 4.0.11 and later 4.x (`experimental.fsModuleCache`, and one key generator for every project: the
 * storyboard project gets both); 5 (`fsModuleCache`, a key generator per project, but only for the project a plugin's
 * `configureVitest` is called with — yours, not the storyboard project this plugin injects). On 5 the storyboard
 * project keeps the cache off (`fsModuleCache: false`, or it would inherit yours without our key); your project gets
 * the key, for storyboards run in it (`isolate: true`, `--project vitest-adcp`) with your cache on. Older Vitest has
 * no module cache. `cacheDir: false` turns it off with every other cache of this package; the modules are not in
 * `cacheDir` (moduleCacheSettings says where, and why).
 */
import { createHash } from 'node:crypto';
import type { VitestPluginContext } from 'vitest/node';
import { privateUserDir } from '../cache/disk-cache.js';
import { packageRoot } from '../cache/location.js';
import { isInCorpus } from '../storyboard/select.js';
import { oversizeEntryFile } from './oversize-entry.js';
import { cleanId, isStoryboard, type CompileState, type PluginState } from './state.js';
import { readyCompile, withStoredData } from './storyboard-modules.js';

type KeyGenerator = (context: { id: string; sourceCode: string }) => string | false | undefined;

/** What `configureVitest`'s context offers to key modules, by Vitest version. */
interface KeyApi {
  /** Vitest 5: a generator for the context's project. */
  defineCacheKeyGenerator?: (generator: KeyGenerator) => void;
  /** Vitest 4.0.11+: a generator for every project. */
  experimental_defineCacheKeyGenerator?: (generator: KeyGenerator) => void;
}

/**
 * The storyboard project's module-cache settings, for its inline config: on with Vitest 4.0.11+ (unless
 * `cacheDir: false`, outside any package, or no private directory for it), off with Vitest 5, nothing with older
 * Vitest.
 *
 * Where: `modules/` of this user's cache directory of the OS (`~/.cache/vitest-adcp/modules` on Linux), which only
 * this user can write to — not `cacheDir`. A cached module is code Vitest runs as it reads it, with nothing of ours between: the
 * entries of `cacheDir` are authenticated before use because others may write there (a restored `node_modules/.vite`,
 * a CI cache from a fork's pull request: docs/security.md, "A hostile cache directory"); these cannot be, so they live
 * where the secret that authenticates the others lives. A CI job starts with it empty, as it starts cold anyway.
 */
export function moduleCacheSettings(
  state: PluginState,
  context: VitestPluginContext,
  modulesDir: () => string | undefined = storyboardModulesDir,
): object {
  const api = context as unknown as KeyApi;
  if (api.defineCacheKeyGenerator) return { fsModuleCache: false };
  if (!api.experimental_defineCacheKeyGenerator || state.options.cacheDir === false) return {};
  // Outside any package Vitest would write the cache's metadata to `<cwd>/node_modules/` (cache/location.ts says why
  // nothing of ours goes there).
  if (packageRoot(context.project.config.root) === undefined) return {};
  const dir = modulesDir();
  if (dir === undefined) return {};
  state.moduleCacheOn = true;
  return { experimental: { fsModuleCache: true, fsModuleCachePath: dir } };
}

/** Where the module cache is kept (moduleCacheSettings says why there); undefined when it cannot be made private. */
export function storyboardModulesDir(): string | undefined {
  return privateUserDir('modules');
}

/** Registers `moduleCacheKey` with Vitest: once on 4.x (it applies to every project), for each project on 5. */
export function defineModuleCacheKeys(state: PluginState, context: VitestPluginContext): void {
  const api = context as unknown as KeyApi;
  const generator: KeyGenerator = ({ id, sourceCode }) => moduleCacheKey(state, id, sourceCode);
  if (api.defineCacheKeyGenerator) api.defineCacheKeyGenerator(generator);
  else if (api.experimental_defineCacheKeyGenerator && !state.moduleKeysDefined) {
    state.moduleKeysDefined = true;
    api.experimental_defineCacheKeyGenerator(generator);
  }
}

/**
 * What Vitest adds to a module's cache key: nothing for a module that is not a storyboard; for a corpus storyboard
 * compiled this run by the run host or held by the compile cache, without a diagnostic, the digest of that compiled
 * module; `false` (not kept) for any other storyboard module.
 */
export function moduleCacheKey(state: CompileState, id: string, sourceCode: string): string | false | undefined {
  if (oversizeEntryFile(id) !== undefined) return false;
  if (!isStoryboard(state, id)) return undefined;
  const { kitRoot } = state;
  if (state.refused.has(id) || !kitRoot || !isInCorpus(cleanId(id), kitRoot)) return false;
  // The run host's compile of this text when it made one, else the compile cache's entry, checked; left for the
  // transform, which Vitest still calls when it keeps nothing under this key.
  const compiled = readyCompile(state, sourceCode, id, { take: false }).result;
  if (!compiled || compiled.diagnostics.length > 0) return false;
  // A module served from Vitest's cache skips the transform: its storyboard is stored here.
  withStoredData(state, compiled);
  const digest = createHash('sha256').update(compiled.code).update('\0').update(compiled.map.mappings);
  return `vitest-adcp:${digest.digest('hex')}`;
}
