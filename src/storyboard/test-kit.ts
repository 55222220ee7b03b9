/**
 * Test kits: the YAML files a storyboard names in `prerequisites.test_kit`
 * (brand kits with `auth.api_key` / `auth.basic`, or runner contracts; see
 * storyboard-schema.yaml, "Test kit flavors"). Loaded as plain data, cached
 * per process, and frozen because every test in the process shares them; a
 * corpus's kits are also kept parsed in the cache directory (`cache` below).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { DiskCache, treeFingerprint } from '../cache/disk-cache.js';
import { DiagnosticSink, StoryboardLoadError } from './diagnostics.js';
import { isPlainObject } from './paths.js';
import { isInCorpus } from './select.js';
import { parseYaml } from './source-map.js';
import type { Diagnostic, SourceLocation, TestKit } from '../model/storyboard.js';

export interface TestKitPathOptions {
  /** The storyboard file that references the kit. */
  storyboardFile: string;
  /** Root of the compliance tree (the directory holding `test-kits/`), if known. */
  corpusRoot?: string;
}

/**
 * Where `ref` points to, as an absolute path:
 * - `./x` or `../x`: relative to the storyboard file;
 * - absolute: as is;
 * - otherwise (the format's convention, `test-kits/acme-outdoor.yaml`): the
 *   corpus root if the file exists there; else the storyboard's directory if
 *   it exists there; else the nearest ancestor directory of the storyboard
 *   holding it (a storyboard inside a compliance tree finds the tree's kits
 *   without being told the root); else the storyboard's directory, so the
 *   "not found" error names the most obvious place.
 */
export function resolveTestKitPath(ref: string, options: TestKitPathOptions): string {
  const storyboardDir = path.dirname(path.resolve(options.storyboardFile));
  if (ref.startsWith('./') || ref.startsWith('../')) return path.resolve(storyboardDir, ref);
  if (path.isAbsolute(ref)) return ref;
  if (options.corpusRoot) {
    const inCorpus = path.resolve(options.corpusRoot, ref);
    if (existsSync(inCorpus)) return inCorpus;
  }
  const besideStoryboard = path.resolve(storyboardDir, ref);
  if (existsSync(besideStoryboard)) return besideStoryboard;
  for (let dir = path.dirname(storyboardDir); ; dir = path.dirname(dir)) {
    const candidate = path.resolve(dir, ref);
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) break;
  }
  return besideStoryboard;
}

export interface LoadTestKitOptions {
  /** Where the kit is referenced (e.g. the storyboard's `prerequisites.test_kit`), for "not found". */
  referencedFrom?: { file: string } & SourceLocation;
  /**
   * Where parsed kits of a compliance corpus are kept between runs (the plugin's cache directory), and that corpus's
   * root: only a kit below it is kept. Every process of a run opens the runs of its storyboards, and with them their
   * kits: the main process and each Vitest worker parsed the same YAML again — over the 3.1 corpus's kits about a tenth
   * of a second each. The corpus's kits are published with it, demo credentials and all; your own kits may hold real
   * ones, and are never written anywhere. None: parsed in every process.
   */
  cache?: { dir: string; corpusRoot: string };
}

interface CacheEntry {
  mtimeMs: number;
  kit: TestKit;
}

const cache = new Map<string, CacheEntry>();

/**
 * Load a test kit (absolute path). Cached per path while the file's mtime is
 * unchanged, so watch mode sees edits. Throws `StoryboardLoadError`.
 */
export function loadTestKit(absPath: string, options: LoadTestKitOptions = {}): TestKit {
  const file = path.resolve(absPath);
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    const at = options.referencedFrom ?? { file, line: 1, column: 1 };
    const sink = new DiagnosticSink(at.file);
    sink.error(
      'test_kit_not_found',
      at,
      `test kit not found: ${file}`,
      'check prerequisites.test_kit, or pass corpusRoot (the directory that holds test-kits/)',
    );
    throw new StoryboardLoadError(sink.items);
  }
  const cached = cache.get(file);
  if (cached && cached.mtimeMs === mtimeMs) return cached.kit;
  const source = readFileSync(file, 'utf8');
  const disk = options.cache && isInCorpus(file, options.cache.corpusRoot) ? kitCache(options.cache.dir) : undefined;
  // Keyed by the text itself: an edited kit is another key, whatever its modification time says.
  const key = disk?.key(source);
  const stored = key ? disk!.readJson(key, isPlainObject) : undefined;
  if (stored) {
    const kit = deepFreeze(stored) as TestKit;
    cache.set(file, { mtimeMs, kit });
    return kit;
  }
  const result = parseTestKit(source, file);
  if (!result.ok) throw new StoryboardLoadError(result.diagnostics);
  cache.set(file, { mtimeMs, kit: result.testKit });
  // Kept only when JSON gives the very data back (YAML's .inf or .nan would come back as null).
  const json = key ? JSON.stringify(result.testKit) : undefined;
  if (key && json !== undefined && isDeepStrictEqual(JSON.parse(json), result.testKit)) disk!.write(key, json);
  return result.testKit;
}

const kitCaches = new Map<string, DiskCache>();

/** What a kit cache entry's key also depends on (exported for its test). */
export function kitCacheSalt(): string[] {
  const yamlVersion = (createRequire(import.meta.url)('yaml/package.json') as { version: string }).version;
  return ['vitest-adcp-test-kit-v1', treeFingerprint(fileURLToPath(new URL('.', import.meta.url))), yamlVersion];
}

/**
 * The parsed kits kept in a cache directory: their key salted with the code that parses them — this folder's modules
 * (the kit parser and its YAML reader) and the yaml package's version.
 */
function kitCache(cacheDir: string): DiskCache {
  let disk = kitCaches.get(cacheDir);
  if (!disk) {
    disk = new DiskCache(cacheDir, 'test-kits', '.json', kitCacheSalt());
    kitCaches.set(cacheDir, disk);
  }
  return disk;
}

/** Forget cached kits (tests; long-lived processes that want a clean slate). */
export function clearTestKitCache(): void {
  cache.clear();
}

export type ParseTestKitResult = { ok: true; testKit: TestKit } | { ok: false; diagnostics: Diagnostic[] };

/** Parse test-kit YAML text. Checks only the shapes the runner reads (`auth`). */
export function parseTestKit(source: string, file: string): ParseTestKitResult {
  const sink = new DiagnosticSink(file);
  const parsed = parseYaml(source);
  for (const e of parsed.errors) sink.error('yaml_syntax', e.loc, e.message, `YAML ${e.code}`);
  if (sink.items.length > 0) return { ok: false, diagnostics: sink.items };
  const data = parsed.data;
  const at = (p: (string | number)[]) => parsed.map.valueLocation(p);
  if (!isPlainObject(data)) {
    sink.error(
      'test_kit_shape',
      at([]),
      'a test kit must be a YAML mapping',
      'start the file with keys such as `id:` and `auth:`',
    );
    return { ok: false, diagnostics: sink.items };
  }
  const auth = data.auth;
  if (auth !== undefined && !isPlainObject(auth)) {
    sink.error(
      'test_kit_shape',
      at(['auth']),
      'test kit `auth` must be a mapping',
      'e.g. `auth: { api_key: demo-key, probe_task: list_creatives }`',
    );
  } else if (isPlainObject(auth)) {
    for (const key of ['api_key', 'probe_task'] as const) {
      if (auth[key] !== undefined && typeof auth[key] !== 'string') {
        sink.error('test_kit_shape', at(['auth', key]), `test kit auth.${key} must be a string`, 'quote the value');
      }
    }
    const basic = auth.basic;
    if (basic !== undefined) {
      if (!isPlainObject(basic)) {
        sink.error(
          'test_kit_shape',
          at(['auth', 'basic']),
          'test kit auth.basic must be a mapping',
          'e.g. `basic: { username: demo, password: demo-secret }`',
        );
      } else {
        for (const key of ['username', 'password'] as const) {
          if (typeof basic[key] !== 'string') {
            sink.error(
              'test_kit_shape',
              at(['auth', 'basic', ...(Object.hasOwn(basic, key) ? [key] : [])]),
              `test kit auth.basic.${key} must be a string`,
              `add \`${key}:\` with a quoted string`,
            );
          }
        }
      }
    }
  }
  if (sink.items.length > 0) return { ok: false, diagnostics: sink.items };
  return { ok: true, testKit: deepFreeze(data) as TestKit };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
