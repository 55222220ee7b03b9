/**
 * What a CI job needs for its cache directory to serve the next job (README, "Keeping the caches in CI"): entries keyed
 * by this package's code as it reads, not as `npm ci` last wrote it (`treeFingerprint`), and authenticated with a key
 * the job is given (`ADCP_CACHE_KEY`) rather than one in a file a fresh runner does not have.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  CACHE_KEY_ENV,
  DiskCache,
  cacheSecret,
  packageFingerprint,
  treeFingerprint,
} from '../../src/cache/disk-cache.js';
import { testDir } from '../helpers/temp-dir.js';

/** A directory of its own, removed when the test ends. */
const fresh = () => testDir('adcp-ci-cache-');

/** A package tree: code, a source map and a declaration, as `dist/` has them. */
function tree(files: Record<string, string> = {}): string {
  const root = fresh();
  const all = {
    'index.js': 'export const a = 1;\n',
    'index.js.map': '{"version":3}',
    'index.d.ts': 'export declare const a = 1;\n',
    'cjs/index.cjs': 'exports.a = 1;\n',
    'data/schema.json': '{}',
    ...files,
  };
  for (const [name, text] of Object.entries(all)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

describe("this package's fingerprint", () => {
  it('is the code as it reads: files written anew with the same content (npm ci) keep it', () => {
    const written = tree();
    const rewritten = tree();
    // Another directory's tree, its files stamped a day later: the same path names and content.
    for (const name of ['index.js', 'cjs/index.cjs', 'data/schema.json', 'index.js.map', 'index.d.ts'])
      utimesSync(join(rewritten, name), new Date(Date.now() + 86_400_000), new Date(Date.now() + 86_400_000));
    expect(treeFingerprint(rewritten)).toBe(treeFingerprint(written));
  });

  it('changes with a code file: edited (same size), added, renamed or removed', () => {
    const base = treeFingerprint(tree());
    expect(treeFingerprint(tree({ 'index.js': 'export const a = 2;\n' }))).not.toBe(base);
    expect(treeFingerprint(tree({ 'more.js': '' }))).not.toBe(base);
    expect(treeFingerprint(tree({ 'data/schema.json': '{ }' }))).not.toBe(base);
    const renamed = tree();
    rmSync(join(renamed, 'cjs', 'index.cjs'));
    writeFileSync(join(renamed, 'cjs', 'other.cjs'), 'exports.a = 1;\n');
    expect(treeFingerprint(renamed)).not.toBe(base);
    const removed = tree();
    rmSync(join(removed, 'data', 'schema.json'));
    expect(treeFingerprint(removed)).not.toBe(base);
  });

  it('leaves out what no run executes: source maps and type declarations', () => {
    const base = treeFingerprint(tree());
    expect(treeFingerprint(tree({ 'index.js.map': '{"version":3,"names":[]}', 'index.d.ts': '' }))).toBe(base);
    expect(treeFingerprint(tree({ 'cjs/index.d.cts': 'x', 'esm.d.mts': 'y' }))).toBe(base);
  });

  it('names a file ending in `.map.js` or `.d.ts.js` by its content: only maps and declarations are left out', () => {
    const base = treeFingerprint(tree({ 'chunk.map.js': 'a', 'types.d.ts.js': 'b' }));
    expect(treeFingerprint(tree({ 'chunk.map.js': 'A', 'types.d.ts.js': 'b' }))).not.toBe(base);
    expect(treeFingerprint(tree({ 'chunk.map.js': 'a', 'types.d.ts.js': 'B' }))).not.toBe(base);
  });

  it('names a link by what it points at, a link to a folder included', () => {
    const linked = tree();
    symlinkSync(join(linked, 'data'), join(linked, 'data-link'));
    symlinkSync(join(linked, 'index.js'), join(linked, 'index-link.js'));
    expect(treeFingerprint(linked)).toMatch(/^[0-9a-f]{64}$/);
    expect(treeFingerprint(linked)).not.toBe(treeFingerprint(tree()));
  });

  it('is worked out once per process: an edit during a run does not change it', () => {
    const root = tree();
    const first = treeFingerprint(root);
    writeFileSync(join(root, 'index.js'), 'export const a = 3;\n');
    expect(treeFingerprint(root)).toBe(first);
  });

  it("is this package's code: src/ here, as dist/ in a package", () => {
    expect(packageFingerprint()).toBe(treeFingerprint(join(import.meta.dirname, '..', '..', 'src')));
    expect(packageFingerprint()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is one nothing else has when the tree cannot be read: nothing cached is served', () => {
    const missing = join(fresh(), 'no-such-dir');
    expect(treeFingerprint(missing)).toMatch(/^unreadable-/);
  });
});

describe('the cache key from ADCP_CACHE_KEY', () => {
  const key = 'k'.repeat(16) + '0123456789abcdef';

  it('authenticates the entries instead of the key file, which it never makes', () => {
    const dir = fresh();
    const secret = cacheSecret(dir, { [CACHE_KEY_ENV]: key });
    expect(secret).toHaveLength(32);
    expect(existsSync(join(dir, 'cache-key'))).toBe(false);
    // The same for another directory and another process: a fresh runner given the job's secret.
    expect(cacheSecret(fresh(), { [CACHE_KEY_ENV]: key })).toEqual(secret);
    expect(cacheSecret(dir, { [CACHE_KEY_ENV]: `${key}.` })).not.toEqual(secret);
    expect(cacheSecret(dir, {})).not.toEqual(secret);
    // Its SHA-256 under this package's label: the same key in every version that keeps this derivation.
    expect(secret).toEqual(createHash('sha256').update('vitest-adcp-cache-key-v1\0').update(key).digest());
  });

  it('serves an entry written under it to a run given it, and to no run without it', () => {
    const cacheDir = fresh();
    const withKey = new DiskCache(cacheDir, 'kind', '.txt', ['v1'], cacheSecret(fresh(), { [CACHE_KEY_ENV]: key }));
    withKey.write(withKey.key('k'), 'compiled');
    const nextJob = new DiskCache(cacheDir, 'kind', '.txt', ['v1'], cacheSecret(fresh(), { [CACHE_KEY_ENV]: key }));
    expect(nextJob.read(nextJob.key('k'))).toBe('compiled');
    const noKey = new DiskCache(cacheDir, 'kind', '.txt', ['v1'], cacheSecret(fresh(), {}));
    expect(noKey.read(noKey.key('k'))).toBeUndefined();
  });

  it('is not used when shorter than 32 characters: a warning names it, without its value, and the key file is', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const dir = fresh();
      const short = 'short-secret-value-of-31-chars!';
      expect(short).toHaveLength(31);
      // A Vitest worker leaves it to the main process.
      cacheSecret(dir, { [CACHE_KEY_ENV]: short, VITEST_WORKER_ID: '1' });
      expect(warn).not.toHaveBeenCalled();
      const secret = cacheSecret(dir, { [CACHE_KEY_ENV]: short });
      expect(existsSync(join(dir, 'cache-key'))).toBe(true);
      expect(secret).toEqual(cacheSecret(dir, {}));
      expect(warn).toHaveBeenCalledTimes(1);
      const [message, options] = warn.mock.calls[0]!;
      expect(options).toEqual({ code: 'ADCP_CACHE_KEY' });
      expect(String(message)).toMatch(/ADCP_CACHE_KEY has 31 characters, fewer than 32: not used/);
      expect(String(message)).not.toContain(short);
      // Once per process.
      cacheSecret(fresh(), { [CACHE_KEY_ENV]: short });
      expect(warn).toHaveBeenCalledTimes(1);
    } finally {
      warn.mockRestore();
    }
  });
});
