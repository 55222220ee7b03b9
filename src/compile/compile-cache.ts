/**
 * Compiled corpus storyboards kept between runs (cache/disk-cache.ts).
 *
 * Compiling a storyboard (parsing the YAML with source positions, checking it
 * against the format, planning its tests) takes about 10 ms a file; over a
 * corpus selection that was a third of a second of the main process before the
 * first worker started, on every run — for files nobody edits. Only files under
 * the installed compliance tree are cached. A storyboard of the user's own is
 * compiled each time: it may name test kits and files of theirs that change
 * without its text changing.
 *
 * **The key covers every input of the compile** (compile/compile.ts), not only
 * the file's text:
 * - the file's path and text, the compile options (runtime, mode, corpus root
 *   and version, strictness), this package's code (`packageFingerprint`) and
 *   the storyboard format schema the loader checks against
 *   (`schema/storyboard.schema.json`, outside the fingerprinted code folder), and the AdCP schemas' manifest the
 *   loader reads task names and request schemas from (`storyboard/adcp-tasks.ts`);
 * - the request-signing vectors: the request-signing role plans one step per file of
 *   the nearest `test-vectors/request-signing/` folder (a corpus given by path
 *   is one users edit), so the folder found for the file and the names and
 *   content of every file below it are in the key — an added, removed or edited
 *   vector is a new plan. Which storyboards synthesize vector steps is only known
 *   after parsing (the id may be written escaped), so every corpus entry
 *   depends on the folder; it changes seldom;
 * - the test kit the storyboard names: the loader warns when it does not exist
 *   (`storyboard/rules/test-kit-reference.ts`). That is known only after the
 *   compile, so the entry records where the kit resolved and whether it existed,
 *   and `load` checks it again.
 * The controller-seeding role's plan reads nothing but the storyboard. A compile that failed to load
 * is not kept (what its diagnostics depend on is not known). Entries are
 * authenticated (DiskCache): the compiled module is code Vitest runs.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DiskCache, packageFingerprint } from '../cache/disk-cache.js';
import { requestSigningVectorsDir } from '../roles/index.js';
import { adcpKnowledge } from '../storyboard/adcp-tasks.js';
import { resolveTestKitPath } from '../storyboard/test-kit.js';
import type { CompileResult } from './compile.js';

/** What is kept of a CompileResult: the module, its map, the diagnostics, and the test kit the plugin watches. */
export interface CachedCompile {
  code: string;
  map: CompileResult['map'];
  diagnostics: CompileResult['diagnostics'];
  testKit?: string;
  /**
   * The loaded storyboard as the test module embeds or names it (its JSON text), for the run host
   * (plugin/run-host.ts), which runs the module's storyboard without loading the file again; absent for a file that did
   * not load.
   */
  storyboard?: string;
  /** The digest the module names its storyboard by (compile.ts `storyboardData: 'stored'`), `storyboard` kept under it. */
  dataDigest?: string;
  /** Set by `store`: where the test kit resolved and whether it existed (checked again by `load`). */
  inputs?: string;
}

const isCachedCompile = (value: unknown): value is CachedCompile => {
  const entry = value as Partial<CachedCompile> | null;
  return (
    typeof entry?.code === 'string' &&
    typeof entry.map === 'object' &&
    entry.map !== null &&
    Array.isArray(entry.diagnostics) &&
    (entry.testKit === undefined || typeof entry.testKit === 'string') &&
    (entry.storyboard === undefined || typeof entry.storyboard === 'string') &&
    (entry.dataDigest === undefined ||
      (typeof entry.dataDigest === 'string' && typeof entry.storyboard === 'string')) &&
    typeof entry.inputs === 'string'
  );
};

const STORYBOARD_SCHEMA = fileURLToPath(new URL('../../schema/storyboard.schema.json', import.meta.url));

/** SHA-256 of a file's content, `missing` when it cannot be read. */
function fileDigest(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return 'missing';
  }
}

/** The names and content of every file below `dir` (sorted, links not followed), as one SHA-256. */
function treeDigest(dir: string): string {
  const hash = createHash('sha256');
  const walk = (current: string): void => {
    const entries = readdirSync(current, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const entry of entries) {
      const full = join(current, entry.name);
      const name = relative(dir, full);
      if (entry.isDirectory()) {
        hash.update(`d\0${name}\0`);
        walk(full);
      } else if (entry.isFile()) hash.update(`f\0${name}\0${fileDigest(full)}\0`);
      else hash.update(`o\0${name}\0`);
    }
  };
  try {
    walk(dir);
    return hash.digest('hex');
  } catch {
    // Unreadable: the compile reports it (a `vectors_unavailable` step); a key nothing else has.
    return `unreadable-${process.pid}-${Date.now()}`;
  }
}

export class CompileCache {
  private readonly disk: DiskCache;
  /** The compliance tree test kits and vectors fall back to (the `kitRoot` of `options`). */
  private readonly corpusRoot: string | undefined;
  /** Vector folder → its digest, for this cache's run. */
  private readonly vectorDigests = new Map<string, string>();
  /** Key → the file it was made for (the plugin asks `key` before `load` and `store`). */
  private readonly files = new Map<string, string>();

  /**
   * `options`: what the compiled module also depends on besides the file's text (compile options, corpus version),
   * as JSON; its `kitRoot` is the compliance tree the compile resolves test kits and vectors against.
   */
  constructor(cacheDir: string, options: string, secret?: Buffer) {
    let kitRoot: unknown;
    try {
      kitRoot = (JSON.parse(options) as { kitRoot?: unknown }).kitRoot;
    } catch {
      kitRoot = undefined;
    }
    this.corpusRoot = typeof kitRoot === 'string' ? kitRoot : undefined;
    // The AdCP schemas the loader checks task names and sample_requests against (storyboard/adcp-tasks.ts): their
    // manifest (regenerated, with its date, whenever they are) stands for them.
    const schemasDir = this.corpusRoot ? adcpKnowledge({ corpusRoot: this.corpusRoot }).schemasDir : undefined;
    const schemas = schemasDir ? fileDigest(join(schemasDir, 'manifest.json')) : 'no schemas';
    this.disk = new DiskCache(
      cacheDir,
      'storyboards',
      '.json',
      ['vitest-adcp-compiled-storyboard-v3', packageFingerprint(), fileDigest(STORYBOARD_SCHEMA), options, schemas],
      ...(secret ? [secret] : []),
    );
  }

  key(file: string, source: string): string {
    const key = this.disk.key(file, source, this.vectorsInput(file));
    this.files.set(key, file);
    return key;
  }

  load(key: string): CachedCompile | undefined {
    const file = this.files.get(key);
    const entry = file === undefined ? undefined : this.disk.readJson(key, isCachedCompile);
    return entry && entry.inputs === this.testKitInput(file!, entry.testKit) ? entry : undefined;
  }

  store(key: string, entry: CachedCompile): void {
    const file = this.files.get(key);
    if (file === undefined || entry.diagnostics.some((d) => d.severity === 'error')) return;
    this.disk.write(key, JSON.stringify({ ...entry, inputs: this.testKitInput(file, entry.testKit) }));
  }

  /** The request-signing vector folder the compile would plan from, and everything in it. */
  private vectorsInput(file: string): string {
    const dir = requestSigningVectorsDir({ file }, { corpusRoot: this.corpusRoot });
    if (dir === undefined) return 'no vectors';
    let digest = this.vectorDigests.get(dir);
    if (digest === undefined) this.vectorDigests.set(dir, (digest = treeDigest(dir)));
    return `${dir}\0${digest}`;
  }

  /** Where the storyboard's test kit resolves and whether it exists: what the loader's test-kit warning depends on. */
  private testKitInput(file: string, testKit: string | undefined): string {
    if (testKit === undefined || this.corpusRoot === undefined) return 'no test kit';
    const resolved = resolveTestKitPath(testKit, { storyboardFile: file, corpusRoot: this.corpusRoot });
    return `${resolved}\0${existsSync(resolved)}`;
  }
}
