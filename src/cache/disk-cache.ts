/**
 * A directory of cache entries, each a file named by the hash of everything
 * its content depends on: a changed input gets a new entry, never a stale one.
 * Used for what a run would otherwise recompute from files nobody edits —
 * compiled schema validators, compiled corpus storyboards
 * (schemas/validator-cache.ts, compile/compile-cache.ts) — and for the
 * manifests of fetched corpora (corpus/fetch.ts).
 *
 * An optimisation only: a directory that cannot be read or written means
 * computing as before. Entries are written aside and renamed, so a parallel
 * worker never reads half of one.
 *
 * **Entries are authenticated, not only named by a hash.** Two of the kinds
 * are code that gets executed (validators: ajv standalone code; compiled
 * storyboards: the test module Vitest runs), and the cache directory is the
 * kind of place other parties can write: a checked-out `node_modules/.vite`,
 * a CI cache restored from another branch or a fork's pull request, a shared
 * work tree. A name (or a SHA-256 stored beside the content) proves nothing:
 * whoever can write the file can write its digest too. So every entry starts
 * with an HMAC-SHA256 of its folder, its key and its content, under a secret
 * that never lives in the cache directory: 32 random bytes generated per user
 * in a 0600 file of the OS's per-user cache directory (`cacheSecret`). An
 * attacker who can write the cache directory but not that file can delete,
 * truncate or replace entries — all of which read as a miss, and the entry is
 * computed again — but cannot make one we accept: not new code, not an
 * edited entry, not a genuine entry copied under another key (the key is in
 * the MAC, so a lenient schema's validator cannot stand in for a strict one).
 * Nothing is executed or parsed before the MAC checks. An attacker who can
 * read the secret file already runs as this user (out of scope). When the
 * secret file cannot be made safe (not ours, readable or writable by others, a
 * link, unwritable home), a per-process random secret is used: the cache then
 * works within one process only and a run computes as if it had none.
 *
 * Reading is bounded too: only regular files (no link, FIFO, device), at most
 * `MAX_ENTRY_BYTES`, so a planted entry cannot hang or exhaust a run.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The largest entry read (a compiled storyboard with its source map is well under a megabyte; a validator less). */
export const MAX_ENTRY_BYTES = 32 * 1024 * 1024;

/** First line of every entry: the format and its MAC (hex). */
const MAC_PREFIX = 'vitest-adcp-mac-v1 ';
const MAC_LINE_LENGTH = MAC_PREFIX.length + 64 + 1;

/** The main process's userCacheRoot, in a Vitest worker that took it (`useMainCacheRoot`). */
let mainCacheRoot: string | undefined;

/**
 * Makes `root` (the main process's `userCacheRoot()`) this process's user cache directory, for `process.env`: a Vitest
 * worker reads the storyboards the main process stored there and authenticates cache entries with its key, whatever
 * cache directory its own environment names (`test.env` may set `XDG_CACHE_HOME` or `HOME` for the tests alone: the
 * stored storyboards would be missing, every file failing, and a key of its own would make each side's entries misses
 * for the other). Undefined: the environment's again.
 */
export function useMainCacheRoot(root: string | undefined): void {
  mainCacheRoot = root;
}

/**
 * The per-user cache directory of the OS (`$XDG_CACHE_HOME` or `~/.cache`, `~/Library/Caches` on macOS,
 * `%LOCALAPPDATA%` on Windows), with `vitest-adcp/` below it: where the secret lives, and the default cache directory
 * of a run outside any package (cache/location.ts). In a worker, the main process's (`useMainCacheRoot`).
 */
export function userCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (mainCacheRoot !== undefined && env === process.env) return mainCacheRoot;
  const base =
    process.platform === 'win32'
      ? env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local')
      : process.platform === 'darwin'
        ? join(homedir(), 'Library', 'Caches')
        : env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/')
          ? env.XDG_CACHE_HOME
          : join(homedir(), '.cache');
  return join(base, 'vitest-adcp');
}

/**
 * `<userCacheRoot>/<name>`, made if missing, when it and `userCacheRoot` are this user's alone to write: directories
 * (not links) owned by this user that no one else can write to (POSIX; what they hold is not secret, only trusted).
 * Undefined otherwise, or when it cannot be made. For what must not sit where others can write and cannot be
 * authenticated as our entries are: Vitest's module cache (plugin/module-cache.ts), code Vitest runs as it reads it.
 */
export function privateUserDir(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const root = userCacheRoot(env);
  const dir = join(root, name);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return [root, dir].every(isPrivateDir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

function isPrivateDir(dir: string): boolean {
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) return false;
  if (process.platform === 'win32') return true;
  return (typeof process.getuid !== 'function' || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0;
}

const SECRET_BYTES = 32;
const secrets = new Map<string, Buffer>();

/** The environment variable that gives the secret instead of the file (a CI job's secret: README, "Keeping the caches in CI"). */
export const CACHE_KEY_ENV = 'ADCP_CACHE_KEY';
/** The shortest `ADCP_CACHE_KEY` used: 32 characters (e.g. `openssl rand -hex 32` gives 64). */
const MIN_KEY_CHARS = 32;
let shortKeyWarned = false;

/**
 * The secret entries are authenticated with.
 *
 * `ADCP_CACHE_KEY`, when set to 32 characters or more: its SHA-256. For a CI job that keeps its cache directory
 * between jobs: a fresh runner has no key file, and a key file kept in the job's cache would sit with the entries it
 * authenticates, so whoever can write that cache could write entries we accept. A job's secret never sits there.
 * Shorter: not used (a warning says so), as if unset.
 *
 * Else the 32 bytes of `<dir>/cache-key` (default `userCacheRoot()`), created on first use (directory 0700, file 0600,
 * exclusive create). Used only when the file is a regular file owned by this user and neither readable nor writable by
 * anyone else (POSIX); else — or when it cannot be made — a random secret for this process alone. Never throws.
 */
export function cacheSecret(dir: string = userCacheRoot(), env: NodeJS.ProcessEnv = process.env): Buffer {
  const given = env[CACHE_KEY_ENV];
  if (given && given.length >= MIN_KEY_CHARS)
    return createHash('sha256').update('vitest-adcp-cache-key-v1\0').update(given).digest();
  // Said once, by the main process: a Vitest worker (VITEST_WORKER_ID) would say it again mid-run.
  if (given && !shortKeyWarned && !env.VITEST_WORKER_ID) {
    shortKeyWarned = true;
    process.emitWarning(
      `${CACHE_KEY_ENV} has ${given.length} characters, fewer than ${MIN_KEY_CHARS}: not used (the per-user key file is). Make one with \`openssl rand -hex 32\`.`,
      { code: CACHE_KEY_ENV },
    );
  }
  let secret = secrets.get(dir);
  if (!secret) {
    secret = readOrCreateSecret(join(dir, 'cache-key')) ?? randomBytes(SECRET_BYTES);
    secrets.set(dir, secret);
  }
  return secret;
}

function readOrCreateSecret(file: string): Buffer | undefined {
  try {
    const existing = readSecret(file);
    if (existing !== 'missing') return existing;
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    // Written whole aside, then linked into place (fails if the file exists): no process ever reads half a secret.
    const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(aside, randomBytes(SECRET_BYTES).toString('hex'), { flag: 'wx', mode: 0o600 });
      linkSync(aside, file);
    } catch (error) {
      // Another process made it first: read theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
    } finally {
      try {
        unlinkSync(aside);
      } catch {
        // Not made.
      }
    }
    const made = readSecret(file);
    return made === 'missing' ? undefined : made;
  } catch {
    return undefined;
  }
}

function readSecret(file: string): Buffer | undefined | 'missing' {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > 1024) return undefined;
    if (process.platform !== 'win32') {
      if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return undefined;
      if ((stat.mode & 0o077) !== 0) return undefined;
    }
    const text = readFileSync(fd, 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(text) ? Buffer.from(text, 'hex') : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export class DiskCache {
  private readonly dir: string;

  /**
   * `folder`: this kind of entry's folder below the cache directory (e.g. `validators`), `extension` its files' (e.g.
   * `.json`); `salt`: what every entry of the kind also depends on (its format version, tool versions, options), part
   * of every key; `secret`: what entries are authenticated with (default: this user's, `cacheSecret()`).
   */
  constructor(
    cacheDir: string,
    private readonly folder: string,
    private readonly extension: string,
    private readonly salt: readonly string[],
    private readonly secret: Buffer = cacheSecret(),
  ) {
    this.dir = join(cacheDir, folder);
  }

  /** The key of an entry: the SHA-256 of the salt and its own inputs, in order, kept apart. */
  key(...inputs: string[]): string {
    const hash = createHash('sha256');
    for (const input of [...this.salt, ...inputs]) hash.update(input).update('\0');
    return hash.digest('hex');
  }

  /**
   * The entry under `key` when it is one this install wrote for that key: a regular file of at most
   * `MAX_ENTRY_BYTES` whose MAC checks. Anything else (missing, planted, edited, copied from another key, written
   * under another secret, unreadable) is undefined: the caller computes it again.
   */
  read(key: string): string | undefined {
    return this.readBytes(key)?.toString('utf8');
  }

  /** As `read`, the entry's bytes (an entry `writeBytes` wrote: V8's code cache, say). */
  readBytes(key: string): Buffer | undefined {
    const bytes = readBounded(this.file(key));
    if (bytes === undefined || bytes.length < MAC_LINE_LENGTH) return undefined;
    const header = bytes.subarray(0, MAC_LINE_LENGTH).toString('latin1');
    if (!header.startsWith(MAC_PREFIX) || header[MAC_LINE_LENGTH - 1] !== '\n') return undefined;
    const stored = Buffer.from(header.slice(MAC_PREFIX.length, MAC_LINE_LENGTH - 1), 'hex');
    const content = bytes.subarray(MAC_LINE_LENGTH);
    const expected = this.mac(key, content);
    if (stored.length !== expected.length || !timingSafeEqual(stored, expected)) return undefined;
    return content;
  }

  /** The JSON entry under `key` when it is authentic, parses and has the shape `isValid` expects; else undefined. */
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

  /** Whether an entry is there under `key` (a regular file; not checked: `read` checks). */
  has(key: string): boolean {
    try {
      return lstatSync(this.file(key)).isFile();
    } catch {
      return false;
    }
  }

  write(key: string, text: string): void {
    this.writeBytes(key, Buffer.from(text, 'utf8'));
  }

  /** Writes an entry of bytes (what `readBytes` reads), authenticated as every entry. */
  writeBytes(key: string, content: Buffer): void {
    if (content.length + MAC_LINE_LENGTH > MAX_ENTRY_BYTES) return;
    let aside: string | undefined;
    try {
      mkdirSync(this.dir, { recursive: true });
      aside = `${this.file(key)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      // `wx`: never through a link or file someone planted under the aside name.
      writeFileSync(
        aside,
        Buffer.concat([Buffer.from(`${MAC_PREFIX}${this.mac(key, content).toString('hex')}\n`, 'latin1'), content]),
        { flag: 'wx' },
      );
      renameSync(aside, this.file(key));
    } catch {
      // A read-only checkout, a full disk: the next run computes again.
      if (aside) {
        try {
          unlinkSync(aside);
        } catch {
          // Not there.
        }
      }
    }
  }

  /** HMAC-SHA256 under the secret of the entry's folder, extension, key and content, kept apart. */
  private mac(key: string, content: Buffer): Buffer {
    return createHmac('sha256', this.secret)
      .update(`${this.folder}\0${this.extension}\0${key}\0`)
      .update(content)
      .digest();
  }

  /** The entry's file (which need not exist). */
  file(key: string): string {
    return join(this.dir, `${key}${this.extension}`);
  }
}

/**
 * The bytes of `file` when it is a regular file (not a link, FIFO or device: opened without following links and
 * without blocking) of at most `MAX_ENTRY_BYTES`; else undefined.
 */
function readBounded(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_ENTRY_BYTES) return undefined;
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
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

/**
 * This package's code: every file under the directory it was loaded from (`dist/` in a package, `src/` in this
 * repository), by path and content — for entries that this code computes. A version number would not do: in
 * development the code changes under the same one.
 */
export function packageFingerprint(): string {
  return treeFingerprint(fileURLToPath(new URL('..', import.meta.url)));
}

const fingerprints = new Map<string, string>();

/**
 * What no run executes: source maps and type declarations. A fingerprint leaves them out (half of `dist/`'s files).
 */
const NOT_CODE = /\.(?:map|d\.[cm]?ts)$/;

/**
 * Every file under `root` that a run may execute, by path and content, once per process: `packageFingerprint` for one
 * folder of this package, for an entry that only that folder's code computes (a parsed test kit).
 *
 * Content, not size and modification time: `npm ci` writes every file anew, so a CI job that restores its cache
 * directory after installing (README, "Keeping the caches in CI") would find every entry keyed by stamps it no
 * longer has. The code files of `dist/` are some 2 MB: reading them took 7–9 ms on a 2-core machine, less than the
 * 15–20 ms of a `stat` of all its ~1,000 files (docs/benchmarks.md, stop 58).
 */
export function treeFingerprint(root: string): string {
  let fingerprint = fingerprints.get(root);
  if (fingerprint !== undefined) return fingerprint;
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    // By name, in code-unit order: `readdirSync`'s order is not documented (libuv sorts today), and a locale's would
    // differ between machines that share a cache.
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (NOT_CODE.test(entry.name)) continue;
      else if (entry.isFile()) {
        const content = readFileSync(full);
        hash.update(`${relative(root, full)}\0${content.length}\0`).update(content);
      } else hash.update(`${relative(root, full)}\0${fileStamp(full)}\0`); // a link: by what it points at now
    }
  };
  try {
    walk(root);
    fingerprint = hash.digest('hex');
  } catch {
    // Unreadable: a fingerprint nothing else has, so nothing cached is ever served.
    fingerprint = `unreadable-${process.pid}-${Date.now()}`;
  }
  fingerprints.set(root, fingerprint);
  return fingerprint;
}
