/**
 * A directory of cache entries, each a file named by the hash of everything
 * its content depends on: a changed input gets a new entry, never a stale one.
 * Used for what a run would otherwise recompute from files nobody edits —
 * compiled schema validators, compiled corpus storyboards, the capability
 * selection (schemas/validator-cache.ts, compile/compile-cache.ts,
 * plugin/capabilities.ts).
 *
 * An optimisation only: a directory that cannot be read or written means
 * computing as before. Entries are written aside and renamed, so a parallel
 * worker never reads half of one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export class DiskCache {
  private readonly dir: string;

  /**
   * `folder`: this kind of entry's folder below the cache directory (e.g. `validators`), `extension` its files' (e.g.
   * `.json`); `salt`: what every entry of the kind also depends on (its format version, tool versions, options), part
   * of every key.
   */
  constructor(
    cacheDir: string,
    folder: string,
    private readonly extension: string,
    private readonly salt: readonly string[],
  ) {
    this.dir = join(cacheDir, folder);
  }

  /** The key of an entry: the SHA-256 of the salt and its own inputs, in order, kept apart. */
  key(...inputs: string[]): string {
    const hash = createHash('sha256');
    for (const input of [...this.salt, ...inputs]) hash.update(input).update('\0');
    return hash.digest('hex');
  }

  read(key: string): string | undefined {
    try {
      return readFileSync(this.file(key), 'utf8');
    } catch {
      return undefined;
    }
  }

  /** The JSON entry under `key` when it parses and has the shape `isValid` expects; else undefined. */
  readJson<T>(key: string, isValid: (value: unknown) => value is T): T | undefined {
    const text = this.read(key);
    if (text === undefined) return undefined;
    try {
      const value: unknown = JSON.parse(text);
      return isValid(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  write(key: string, text: string): void {
    try {
      mkdirSync(this.dir, { recursive: true });
      const aside = `${this.file(key)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      writeFileSync(aside, text);
      renameSync(aside, this.file(key));
    } catch {
      // A read-only checkout, a full disk: the next run computes again.
    }
  }

  private file(key: string): string {
    return join(this.dir, `${key}${this.extension}`);
  }
}

/** A file's size and modification time, `missing` when there is none: a reinstalled file changes it. */
export function fileStamp(file: string): string {
  try {
    const stat = statSync(file);
    return `${stat.size}\0${stat.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

let fingerprint: string | undefined;

/**
 * This package's code: every file under the directory it was loaded from (`dist/` in a package, `src/` in this
 * repository), by path, size and modification time — for entries that this code computes. A version number would not
 * do: in development the code changes under the same one.
 */
export function packageFingerprint(): string {
  if (fingerprint !== undefined) return fingerprint;
  const root = fileURLToPath(new URL('..', import.meta.url));
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else hash.update(`${relative(root, full)}\0${fileStamp(full)}\n`);
    }
  };
  try {
    walk(root);
    fingerprint = hash.digest('hex');
  } catch {
    // Unreadable: a fingerprint nothing else has, so nothing cached is ever served.
    fingerprint = `unreadable-${process.pid}-${Date.now()}`;
  }
  return fingerprint;
}
