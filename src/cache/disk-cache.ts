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
  /** `dir`: this kind of entry's folder (e.g. `<cacheDir>/validators`); `extension`: its files' (e.g. `.json`). */
  constructor(
    readonly dir: string,
    private readonly extension: string,
  ) {}

  /** The key of an entry: the SHA-256 of its inputs, in order, kept apart. */
  static key(...inputs: string[]): string {
    const hash = createHash('sha256');
    for (const input of inputs) hash.update(input).update('\0');
    return hash.digest('hex');
  }

  read(key: string): string | undefined {
    try {
      return readFileSync(this.file(key), 'utf8');
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
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const stat = statSync(full);
      if (stat.isDirectory()) walk(full);
      else hash.update(`${relative(root, full)}\0${stat.size}\0${stat.mtimeMs}\n`);
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
