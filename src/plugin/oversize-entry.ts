/**
 * A storyboard file over the byte bound (`storyboardBounds.maxBytes`) as a test file, while Vitest's module cache is
 * on: its entry resolves to an id that names no file, so nothing but Vitest's scan of test files reads it.
 *
 * Why: Vitest keys a cached module by its text, which it reads from the module's file before anything loads it
 * (4.x `readFileContentToCache`), unless the id names none (a `\0` id). With the cache on, a 50 MB storyboard was read
 * whole twice in the main process — once by Vitest's look for `@vitest-environment` comments in every test file, once
 * for the key —, each ~100 MB at its peak (the UTF-8 decode's pieces and their flattened copy), though the plugin never
 * reads it. Measured on test/e2e/hostile-yaml.test.ts's 50 MB file alone: the main process grew by 233 MB with the
 * key's read, by 141 MB without.
 *
 * The module of that id is the file's load failure, as `loadStoryboard` makes it for a file read by path. In watch
 * mode Vitest 4.1 resolves a re-run test file again, so a file trimmed under the bound gets its own module
 * (test/e2e/watch.test.ts). Should a Vite keep the id for the file's url instead (its module graph caches a url's
 * module), the load still holds: it checks the size each time, a file within the bound becomes a module importing the
 * file itself (compiled as any storyboard), and the file is the module's watched dependency, so saving it reloads it.
 */
import type { CachedCompile } from '../compile/compile-cache.js';
import { fileBytesOverBound } from '../storyboard/bounds.js';
import { cleanId, isStoryboard, OVERSIZE_ENTRY, type CompileState } from './state.js';
import { oversizeModule } from './storyboard-modules.js';

/** What the load of an oversize entry uses of Vite's plugin context. */
export interface LoadContext {
  addWatchFile(id: string): void;
}

/**
 * `resolveId` of a test file (an entry: no importer): the oversize entry's id when the file is a storyboard over the
 * byte bound and the module cache is on; otherwise undefined (resolved as usual).
 */
export function oversizeEntryId(state: CompileState, source: string): string | undefined {
  if (!state.moduleCacheOn) return undefined;
  const file = cleanId(source);
  // The size first, one stat: telling a storyboard from other YAML can cost more (Vitest's `matchesTestGlob` compiles
  // the project's globs for a file it has not listed: asked of every entry before its answers were kept
  // (storyboard-modules.ts testGlobMatcher), the bin's first 3.1.15 run spent ~0.8 CPU-s and ~40 MB of peak RSS).
  if (!/\.ya?ml$/.test(file) || fileBytesOverBound(file, state.options.storyboardBounds) === undefined)
    return undefined;
  return isStoryboard(state, source) ? OVERSIZE_ENTRY + file : undefined;
}

/** The storyboard file an oversize entry's id names; undefined for any other id. */
export function oversizeEntryFile(id: string): string | undefined {
  return id.startsWith(OVERSIZE_ENTRY) ? id.slice(OVERSIZE_ENTRY.length) : undefined;
}

/**
 * `load` of an oversize entry: the load failure, mapped onto the file (its source by absolute path: the id's own
 * folder is no folder, and Vitest places a test where a stack frame names the test file); or, once the file is within
 * the bound, an import of the file.
 */
export function loadOversizeEntry(
  context: LoadContext,
  state: CompileState,
  file: string,
): { code: string; map: CachedCompile['map'] | null } {
  context.addWatchFile(file);
  const bytes = fileBytesOverBound(file, state.options.storyboardBounds);
  if (bytes === undefined) return { code: `import ${JSON.stringify(file)};\n`, map: null };
  const module = oversizeModule(state, file, bytes, 'tests');
  module.map.sources = [file];
  return module;
}
