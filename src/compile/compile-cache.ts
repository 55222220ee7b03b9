/**
 * Compiled corpus storyboards kept between runs (cache/disk-cache.ts).
 *
 * Compiling a storyboard (parsing the YAML with source positions, checking it
 * against the format, planning its tests) takes about 10 ms a file; over a
 * corpus selection that was a third of a second of the main process before the
 * first worker started, on every run — for files nobody edits. Only files under
 * the installed compliance tree are cached: their text, the tree's version, the
 * compile options and this package's code make the key, so a reinstalled corpus
 * or an upgraded (or, here, edited) compiler gets new entries. A storyboard of
 * the user's own is compiled each time: it may name test kits and files of
 * theirs that change without its text changing.
 */
import { DiskCache, packageFingerprint } from '../cache/disk-cache.js';
import type { CompileResult } from './compile.js';

/** What is kept of a CompileResult: the module, its map, the diagnostics, and the test kit the plugin watches. */
export interface CachedCompile {
  code: string;
  map: CompileResult['map'];
  diagnostics: CompileResult['diagnostics'];
  testKit?: string;
}

const isCachedCompile = (value: unknown): value is CachedCompile => {
  const entry = value as Partial<CachedCompile> | null;
  return typeof entry?.code === 'string' && typeof entry.map === 'object' && entry.map !== null && Array.isArray(entry.diagnostics);
};

export class CompileCache {
  private readonly disk: DiskCache;

  /** `options`: what the compiled module also depends on besides the file's text (compile options, corpus version). */
  constructor(cacheDir: string, options: string) {
    this.disk = new DiskCache(cacheDir, 'storyboards', '.json', ['vitest-adcp-compiled-storyboard-v1', packageFingerprint(), options]);
  }

  key(file: string, source: string): string {
    return this.disk.key(file, source);
  }

  load(key: string): CachedCompile | undefined {
    return this.disk.readJson(key, isCachedCompile);
  }

  store(key: string, entry: CachedCompile): void {
    this.disk.write(key, JSON.stringify(entry));
  }
}
