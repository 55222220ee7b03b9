/**
 * Where a compiled storyboard module's storyboard is kept for the worker that runs it, instead of inside the module.
 *
 * Why not inside: Vite parses every module it serves (the SSR transform), and its parser (rolldown's, on its own
 * threads) keeps the memory of what it parsed. A module that embedded its storyboard (base64 of the JSON: 2 MB over the
 * 90 modules of a 3.1.15 run) held ~60 MB of the main process's peak on a first run; the module that names its
 * storyboard by digest is 8× smaller (docs/benchmarks.md, issue 32). The main process writes each storyboard here as
 * it hands Vite a module (compiled, from the compile cache, or from Vitest's module cache), the worker reads it as the
 * module runs (vitest/suite.ts `storyboardStored`).
 *
 * Where: `storyboards/` of this user's cache directory of the OS, private to the user (`privateUserDir`), as Vitest's
 * module cache is: what is read from it drives the run, and it is trusted because only this user can write there. Its
 * entries go through DiskCache for the atomic write and the bounded, link-refusing read; their MAC is under no secret
 * (the directory's privacy is what authenticates them, and a worker could not share a per-process secret): it checks
 * that an entry is whole and under its own digest. Entries are content-addressed (the SHA-256 of the JSON), so one
 * entry serves every run of that storyboard; none is ever stale.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { DiskCache, privateUserDir, userCacheRoot } from './disk-cache.js';

const FOLDER = 'storyboards';
/** No secret: see the header. */
const NO_SECRET = Buffer.alloc(0);

/** The digest a storyboard is stored under: the SHA-256 of its JSON text. */
export function storyboardDigest(json: string): string {
  return createHash('sha256').update(json).digest('hex');
}

/** Where the store is (`env` as the process's), made or not. */
export function storedStoryboardsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(userCacheRoot(env), FOLDER);
}

export class StoredStoryboards {
  private constructor(
    /** Its directory. */
    readonly dir: string,
    private readonly disk: DiskCache,
  ) {}

  /** The store of this user (`env` as the process's); undefined when its directory cannot be made private. */
  static open(env: NodeJS.ProcessEnv = process.env): StoredStoryboards | undefined {
    const dir = privateUserDir(FOLDER, env);
    if (dir === undefined) return undefined;
    return new StoredStoryboards(dir, new DiskCache(userCacheRoot(env), FOLDER, '.json', [], NO_SECRET));
  }

  /** Stores a storyboard's JSON under its digest unless it is there; false when it could not be written. */
  keep(digest: string, json: string): boolean {
    if (this.disk.has(digest)) return true;
    this.disk.write(digest, json);
    return this.disk.has(digest);
  }

  /** The JSON stored under `digest`; undefined when it is not there whole. */
  read(digest: string): string | undefined {
    return this.disk.read(digest);
  }
}
