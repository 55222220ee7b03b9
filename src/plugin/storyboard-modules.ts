/**
 * The plugin's `load` and `transform` of storyboard files: each compiles to a test module (with a source map back to
 * the YAML), or to its typed data when another module imports it (`?adcp-storyboard-data`, state.ts).
 */
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { StoredStoryboards, storedStoryboardsDir } from '../cache/stored-storyboards.js';
import { CompileCache, type CachedCompile } from '../compile/compile-cache.js';
import { compileOversizeStoryboard, compileStoryboard, type CompileOptions } from '../compile/compile.js';
import type { Corpus } from '../corpus.js';
import { signingVectorsFor } from '../roles/index.js';
import { fileBytesOverBound } from '../storyboard/bounds.js';
import { formatDiagnostic } from '../storyboard/diagnostics.js';
import { readStoryboardFile } from '../storyboard/read.js';
import { isInCorpus } from '../storyboard/select.js';
import type { Diagnostic, Storyboard } from '../model/storyboard.js';
import { cleanId, DATA_QUERY, isStoryboard, type CompileState } from './state.js';

/** What `transform` uses of Vite's plugin context. */
export interface TransformContext {
  warn(message: string): void;
  addWatchFile(id: string): void;
}

type Module = Pick<CachedCompile, 'code' | 'map'>;

/** The `load` hook. */
export function loadStoryboard(state: CompileState, id: string): Module | null {
  // A storyboard over the byte bound is never read: its module is its load failure (transform leaves it alone).
  if (!isStoryboard(state, id)) return null;
  const bytes = fileBytesOverBound(cleanId(id), state.options.storyboardBounds);
  if (bytes === undefined) {
    state.refused.delete(id);
    return null;
  }
  state.refused.add(id);
  return oversizeModule(state, cleanId(id), bytes, id.includes(`?${DATA_QUERY}`) ? 'data' : 'tests');
}

/** The module of a storyboard file of `bytes` over the byte bound: its load failure, or (`data`) the throwing import. */
export function oversizeModule(state: CompileState, file: string, bytes: number, mode: 'tests' | 'data'): Module {
  const bounds = state.options.storyboardBounds;
  const compiled = compileOversizeStoryboard(file, bytes, {
    runtime: state.runtime,
    mode,
    ...(bounds ? { bounds } : {}),
  });
  return { code: compiled.code, map: compiled.map };
}

/** The `transform` hook. */
export function transformStoryboard(
  context: TransformContext,
  state: CompileState,
  code: string,
  id: string,
): Module | null {
  if (!isStoryboard(state, id) || state.refused.has(id)) return null;
  const result = compiled(state, code, id);
  for (const d of result.diagnostics.filter((d) => d.severity === 'warning')) {
    context.warn(`${d.file}:${d.line}:${d.column}: [${d.rule}] ${d.message}${d.hint ? ` — ${d.hint}` : ''}`);
  }
  // Editing a relative test kit re-runs the storyboards that use it.
  if (result.testKit?.startsWith('.')) context.addWatchFile(resolve(cleanId(id), '..', result.testKit));
  return { code: result.code, map: result.map };
}

/** A storyboard module compiled, or loaded from the compile cache, its storyboard stored where its worker reads it. */
function compiled(state: CompileState, code: string, id: string): CachedCompile {
  const { file, mode, key, result } = readyCompile(state, code, id, { take: true });
  if (result) return withStoredData(state, result);
  const fresh = compileFresh(code, file, { runtime: state.runtime, mode, ...loadOptions(state) });
  if (key) state.compileCache!.store(key, fresh);
  return withStoredData(state, fresh);
}

/**
 * A module that names its storyboard by digest, that storyboard stored (cache/stored-storyboards.ts) before Vite hands
 * the module to a worker: whichever way the module came (compiled now, the compile cache, Vitest's module cache: its
 * key, moduleCacheKey, comes here too), and whatever removed the entry since. Stored only when missing.
 */
export function withStoredData(state: CompileState, result: CachedCompile): CachedCompile {
  const store = state.storedStoryboards;
  if (result.dataDigest !== undefined && !store?.keep(result.dataDigest, result.storyboard!))
    throw new Error(
      `vitest-adcp: could not write the compiled storyboard to ${store?.dir ?? storedStoryboardsDir()} (a full disk, a read-only home?); free it, or set the plugin option cacheDir: false to keep storyboards in their modules`,
    );
  return result;
}

/**
 * The compile of a storyboard module's text that needs no compiling: the run host's this run (loadForRun keeps it for
 * the transform of the same text: one for both; `take` hands it over), else, for a corpus file, the compile cache's
 * entry (compile/compile-cache.ts: corpus files are installed, never edited). With the module's file, mode and
 * compile-cache key (a corpus file's, when there is a cache), for a compile and store when there is none.
 */
export function readyCompile(
  state: CompileState,
  code: string,
  id: string,
  { take }: { take: boolean },
): { file: string; mode: 'tests' | 'data'; key?: string; result?: CachedCompile } {
  const { compileCache, kitRoot } = state;
  const file = cleanId(id);
  const mode = id.includes(`?${DATA_QUERY}`) ? 'data' : 'tests';
  const key =
    compileCache && kitRoot && isInCorpus(file, kitRoot) ? compileCache.key(file, `${mode}\0${code}`) : undefined;
  const recent = state.recentCompiles.get(`${mode}\0${file}`);
  if (take) state.recentCompiles.delete(`${mode}\0${file}`);
  if (recent?.code === code) return { file, mode, result: recent.result };
  const cached = key ? compileCache!.load(key) : undefined;
  if (cached && mode === 'tests') state.compiledBefore.add(file);
  return { file, mode, ...(key ? { key } : {}), ...(cached ? { result: cached } : {}) };
}

/**
 * A storyboard file compiled (not from the cache). The compiler reads no file: the signed_requests vectors a test module
 * plans from are read here (once per process, a few ms; roles/request-signing/vectors.ts).
 */
function compileFresh(code: string, file: string, options: CompileOptions): CachedCompile {
  const compiled = compileStoryboard(code, file, {
    ...options,
    ...(options.mode !== 'data'
      ? { signingVectors: signingVectorsFor({ file }, { corpusRoot: options.corpusRoot }) }
      : {}),
  });
  return {
    code: compiled.code,
    map: compiled.map,
    diagnostics: compiled.diagnostics,
    ...(compiled.storyboard?.prerequisites?.test_kit ? { testKit: compiled.storyboard.prerequisites.test_kit } : {}),
    ...(compiled.storyboard && options.mode !== 'data'
      ? { storyboard: compiled.stored?.json ?? JSON.stringify(compiled.storyboard) }
      : {}),
    ...(compiled.stored ? { dataDigest: compiled.stored.digest } : {}),
  };
}

/** How the compiler loads a storyboard file. */
function loadOptions({ options, kitRoot, loadSchemasDir, schemaCacheDir, storedStoryboards }: CompileState) {
  return {
    corpusRoot: kitRoot,
    ...(storedStoryboards ? { storyboardData: 'stored' as const } : {}),
    ...(loadSchemasDir ? { schemasDir: loadSchemasDir } : {}),
    ...(schemaCacheDir ? { schemaCacheDir } : {}),
    ...(options.strictKeys === false ? { strictKeys: false as const } : {}),
    ...(options.storyboardBounds ? { bounds: options.storyboardBounds } : {}),
  };
}

/**
 * A storyboard file's storyboard exactly as its compiled test module embeds or names it, and its load warnings, for the
 * run host (run-host.ts): compiled now (or taken from the compile cache), and the transform then reuses that compile;
 * undefined when it does not load (its module is its load failure) or is over the byte bound (never read).
 */
export function loadForRun(
  state: CompileState,
  file: string,
): { storyboard: Storyboard; loadWarnings: string[] } | undefined {
  const loaded = compileForRun(state, file);
  if (!loaded.ok) return undefined;
  return {
    storyboard: JSON.parse(loaded.storyboard) as Storyboard,
    loadWarnings: loaded.result.diagnostics.filter((d) => d.severity === 'warning').map(formatDiagnostic),
  };
}

/**
 * The load errors of a storyboard file, each located (`file:line:col`, its rule); none when it loads. Compiled as the
 * run host compiles it, so the transform reuses the compile; a file over the byte bound is not read.
 */
export function loadErrors(state: CompileState, file: string): Diagnostic[] {
  const loaded = compileForRun(state, file);
  return loaded.ok ? [] : loaded.diagnostics.filter((d) => d.severity === 'error');
}

type RunCompile = { ok: true; storyboard: string; result: CachedCompile } | { ok: false; diagnostics: Diagnostic[] };

/** A storyboard file compiled for the run (read after its size is checked), kept for the transform of the same text. */
function compileForRun(state: CompileState, file: string): RunCompile {
  const read = readStoryboardFile(file, state.options.storyboardBounds);
  if (!read.ok) return { ok: false, diagnostics: read.diagnostics };
  const result = compiled(state, read.text, file);
  state.recentCompiles.set(`tests\0${file}`, { code: read.text, result });
  if (result.storyboard === undefined) return { ok: false, diagnostics: result.diagnostics };
  return { ok: true, storyboard: result.storyboard, result };
}

/**
 * What the module hooks need once the storyboard project is configured: where test kits and schemas come from (the
 * selected corpus, else the newest installed one: `fallback`), the compile cache, and the project's test globs.
 */
export function configureCompile(
  state: CompileState,
  project: TestProject,
  fallback: Corpus | undefined,
  cacheDir: string | undefined,
): void {
  const { options, runtime } = state;
  state.kitRoot = fallback?.root;
  state.loadSchemasDir = options.schemasDir ?? fallback?.schemasDir;
  state.storedStoryboards = options.cacheDir === false ? undefined : StoredStoryboards.open();
  state.compileCache = cacheDir
    ? new CompileCache(
        cacheDir,
        JSON.stringify({
          runtime,
          kitRoot: state.kitRoot,
          corpusVersion: fallback?.version,
          strictKeys: options.strictKeys !== false,
          bounds: options.storyboardBounds ?? {},
          storedStoryboards: state.storedStoryboards !== undefined,
        }),
      )
    : undefined;
  state.matchesTestGlob = testGlobMatcher(project);
}

/**
 * `project.matchesTestGlob`, each answer kept: for a file it has not listed, Vitest compiles the project's include and
 * exclude globs at each call (picomatch), and the answer for a path holds while the project does (its config).
 */
export function testGlobMatcher(project: Pick<TestProject, 'matchesTestGlob'>): (id: string) => boolean {
  const answers = new Map<string, boolean>();
  return (id) => {
    let answer = answers.get(id);
    if (answer === undefined) answers.set(id, (answer = project.matchesTestGlob(id)));
    return answer;
  };
}

/**
 * Transform the run's storyboard files in the main process as the workers start (run-start.ts, once the preflight has
 * passed): otherwise each worker waits for its next file's transform in turn (the main process sat idle 60% of a run).
 * Not earlier: the main process's work before the preflight's requests delays the run's first call.
 */
export function warmUp(state: CompileState, project: TestProject): void {
  const ssr = (project.vite as { environments?: Record<string, { warmupRequest?: (url: string) => Promise<void> }> })
    .environments?.ssr;
  if (!ssr?.warmupRequest) return;
  // One file after another, not all at once: the run's first calls go out meanwhile, and their answers are read
  // between two transforms rather than after all of them (a worker asking for a file gets it at once either way).
  // With the module cache on (module-cache.ts), a file an earlier run compiled is served from it: warming it up would
  // transform it in vain (Vitest's cache is read on a worker's request, not on a warm-up).
  const files = [...state.explicit].filter((file) => !(state.moduleCacheOn && state.compiledBefore.has(file)));
  const next = (): void => {
    const file = files.shift();
    if (file !== undefined) void ssr.warmupRequest!(file).then(next, next);
  };
  next();
}
