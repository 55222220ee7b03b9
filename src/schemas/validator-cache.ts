/**
 * Compiled AdCP schema validators kept on disk between runs.
 *
 * ajv turns a large response schema into a validation function in tens of
 * milliseconds, and every Vitest worker of every run used to pay that again for
 * each schema its storyboards name (a quarter of a second per worker over the
 * corpus). ajv can write a compiled validator out as module code ("standalone
 * code"); this cache stores that code under a key made of everything the code
 * depends on — the text of the schema and of every schema its `$ref`s reach,
 * ajv's version and options — so a changed or reinstalled schema set can never
 * be served stale code: it simply gets a new key.
 *
 * The code is executed, so only code this install wrote is: DiskCache hands
 * out an entry only when its HMAC — under a per-user secret kept outside the
 * cache directory — checks for this very key (cache/disk-cache.ts says why a
 * plain digest beside the code would not do). A planted or edited file, or a
 * genuine validator copied under another schema's key, is never run: it reads
 * as a miss and the schema is compiled again. Not executing cached code at
 * all would mean not caching validators (ajv's output is code); the MAC keeps
 * the speed and runs only what we compiled.
 *
 * An entry that does not load means compiling as before (cache/disk-cache.ts).
 *
 * Beside each entry, V8's code cache for it (`.v8`, authenticated as the code is): V8's compile of a run's stored
 * validators (megabytes of code) was most of what loading them cost a warm run's main process; with the code cache V8
 * deserialises what it compiled before instead (docs/benchmarks.md, stop 60). Made the first time an entry is loaded
 * without one (a compile from the schemas runs ajv's own code, not the stored one), and made again when V8 refuses it
 * (another V8, other V8 flags): V8 checks that it was made from this very source text and by this V8 and flags.
 */
import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import type { ValidateFunction } from 'ajv';
import { DiskCache } from '../cache/disk-cache.js';
import { unicodeEscape } from '../model/redact.js';

const localRequire = createRequire(import.meta.url);

export class ValidatorCache {
  private readonly disk: DiskCache;
  /** V8's code cache of each entry, under the entry's key and this V8's version (see the header). */
  private readonly compiled: DiskCache;

  /** `salt`: what the generated code also depends on besides the schemas (ajv version, options). */
  constructor(cacheDir: string, salt: string) {
    // The first salt entry names the stored format: bumped when it changes shape (v3: entries carry a MAC; v4: ASCII,
    // from schemas without annotations).
    this.disk = new DiskCache(cacheDir, 'validators', '.cjs', ['vitest-adcp-validator-v4', salt]);
    this.compiled = new DiskCache(cacheDir, 'validators', '.v8', [
      'vitest-adcp-validator-code-cache-v1',
      `v8 ${process.versions.v8} ${process.arch}`,
    ]);
  }

  /** The key of a validator: the schema's `$id` and the digests of the schemas it reaches, in path order. */
  key(id: string, schemas: readonly { path: string; digest: string }[]): string {
    const sorted = [...schemas].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return this.disk.key(id, ...sorted.flatMap(({ path, digest }) => [path, digest]));
  }

  /** The validator stored under `key`, or undefined (never stored, unreadable, not ours — see above —, or broken). */
  load(key: string): ValidateFunction | undefined {
    // Authenticated before anything else: only code this install wrote for this key is ever run.
    const code = this.disk.read(key);
    if (code === undefined) return undefined;
    try {
      const compiledKey = this.compiled.key(key);
      const cachedData = this.compiled.readBytes(compiledKey);
      const script = new Script(`(function (require, module, exports) {${code}\n})`, {
        // The entry's file: V8 serves a script of the same text and name it compiled before in this process from
        // memory, without the code cache (a second registry of one cache directory in a process pays nothing again).
        filename: this.disk.file(key),
        ...(cachedData ? { cachedData } : {}),
      });
      const module = { exports: {} as { default?: ValidateFunction } };
      // The code is CommonJS that requires ajv's runtime helpers and ajv-formats' formats: resolved from this package,
      // where they are dependencies, wherever the cache directory is.
      (script.runInThisContext() as (r: NodeJS.Require, m: typeof module, e: typeof module.exports) => void)(
        localRequire,
        module,
        module.exports,
      );
      const validate = module.exports.default ?? (module.exports as unknown as ValidateFunction);
      if (typeof validate !== 'function') return undefined;
      if (!cachedData || script.cachedDataRejected === true)
        this.compiled.writeBytes(compiledKey, script.createCachedData());
      return validate;
    } catch {
      return undefined;
    }
  }

  /**
   * Stored as ASCII: one character that is not (a "—" in a schema's text) makes V8 hold the whole code, megabytes, as
   * a two-byte string, and reading it decodes slower. `\uXXXX` means the same character wherever ajv's code has one:
   * in a string literal (its names and values are JSON-quoted, patterns become `new RegExp("…")`) or a comment.
   */
  store(key: string, code: string): void {
    this.disk.write(key, asciiOnly(code));
  }
}

/**
 * JavaScript source with every non-ASCII UTF-16 unit written as a `\uXXXX` escape. A loop gluing the slices between
 * matches, not `replace` with a callback: the validators of a 3.1.15 run (42, 13 MB of code, a few such units in each)
 * took 95 ms instead of 175 ms, on the main process of a first run.
 */
function asciiOnly(code: string): string {
  const other = /[^\x00-\x7f]/g;
  let out = '';
  let last = 0;
  for (let match = other.exec(code); match !== null; match = other.exec(code)) {
    out += code.slice(last, match.index) + unicodeEscape(match[0]);
    last = match.index + 1;
  }
  return last === 0 ? code : out + code.slice(last);
}
