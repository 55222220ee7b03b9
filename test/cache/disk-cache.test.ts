/**
 * Cache entries are authenticated (src/cache/disk-cache.ts): an entry is served only when its MAC, under a secret kept
 * outside the cache directory, checks for its own key. Someone who can write the cache directory can make entries
 * go missing, never make one we accept. And the default cache directory outside any package is not
 * `<cwd>/node_modules/.vite` (src/cache/location.ts).
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DiskCache,
  MAX_ENTRY_BYTES,
  cacheSecret,
  useMainCacheRoot,
  userCacheRoot,
} from '../../src/cache/disk-cache.js';
import { defaultCacheDir, packageRoot } from '../../src/cache/location.js';
import { ValidatorCache } from '../../src/schemas/validator-cache.js';

const scratch = mkdtempSync(join(tmpdir(), 'adcp-disk-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const secret = randomBytes(32);
let n = 0;
const fresh = () => join(scratch, `c${n++}`);
const files = (dir: string, folder: string) => readdirSync(join(dir, folder)).filter((f) => !f.endsWith('.tmp'));

describe('DiskCache entries', () => {
  it("are read back by the writer's secret, and by nobody else's", () => {
    const dir = fresh();
    const cache = new DiskCache(dir, 'kind', '.txt', ['v1'], secret);
    const key = cache.key('a');
    cache.write(key, 'hello ✓');
    expect(cache.read(key)).toBe('hello ✓');
    expect(new DiskCache(dir, 'kind', '.txt', ['v1'], randomBytes(32)).read(key)).toBeUndefined();
  });

  it('planted, edited, headerless, truncated or copied under another key: a miss, never the content', () => {
    const dir = fresh();
    const cache = new DiskCache(dir, 'kind', '.txt', ['v1'], secret);
    const [a, b] = [cache.key('a'), cache.key('b')];
    cache.write(a, 'content of a');
    const file = join(dir, 'kind', `${a}.txt`);
    const real = readFileSync(file);
    // A plain digest beside the content would not help: the attacker computes it too.
    writeFileSync(file, 'planted');
    expect(cache.read(a)).toBeUndefined();
    writeFileSync(file, Buffer.concat([real.subarray(0, real.indexOf(10) + 1), Buffer.from('content of A')]));
    expect(cache.read(a)).toBeUndefined();
    writeFileSync(file, real.subarray(0, 20));
    expect(cache.read(a)).toBeUndefined();
    writeFileSync(file, real);
    expect(cache.read(a)).toBe('content of a');
    // A genuine entry under another key's name (say, a lenient schema's validator for a strict one's).
    copyFileSync(file, join(dir, 'kind', `${b}.txt`));
    expect(cache.read(b)).toBeUndefined();
    // Another kind of entry with the same key and secret.
    mkdirSync(join(dir, 'other'), { recursive: true });
    copyFileSync(file, join(dir, 'other', `${a}.txt`));
    expect(new DiskCache(dir, 'other', '.txt', ['v1'], secret).read(a)).toBeUndefined();
  });

  it("a link, a FIFO or an oversized file under an entry's name is a miss, at once", () => {
    const dir = fresh();
    const cache = new DiskCache(dir, 'kind', '.txt', ['v1'], secret);
    const key = cache.key('x');
    cache.write(key, 'x');
    const file = join(dir, 'kind', `${key}.txt`);
    const copy = join(dir, 'copy');
    copyFileSync(file, copy);
    rmSync(file);
    symlinkSync(copy, file);
    expect(cache.read(key)).toBeUndefined();
    rmSync(file);
    if (process.platform !== 'win32') {
      // Opened without O_NONBLOCK, a FIFO with no writer blocks the read for ever: this line returning is the check.
      execFileSync('mkfifo', [file]);
      expect(cache.read(key)).toBeUndefined();
      rmSync(file);
    }
    writeFileSync(file, Buffer.alloc(MAX_ENTRY_BYTES + 1, 0x20));
    expect(cache.read(key)).toBeUndefined();
    // The entry is written again over what was there.
    cache.write(key, 'x');
    expect(cache.read(key)).toBe('x');
  });

  it('an unwritable cache directory means no cache, never an error', () => {
    const blocker = join(scratch, 'a-file');
    writeFileSync(blocker, '');
    const cache = new DiskCache(join(blocker, 'below'), 'kind', '.txt', ['v1'], secret);
    expect(() => cache.write(cache.key('k'), 'v')).not.toThrow();
    expect(cache.read(cache.key('k'))).toBeUndefined();
  });
});

describe('the cache secret', () => {
  it('is made once per user directory (0600, 0700), and the same next time', () => {
    const dir = join(fresh(), 'vitest-adcp');
    const first = cacheSecret(dir);
    expect(first).toHaveLength(32);
    const file = join(dir, 'cache-key');
    if (process.platform !== 'win32') {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
    }
    expect(readFileSync(file, 'utf8')).toBe(first.toString('hex'));
  });

  it.skipIf(process.platform === 'win32')(
    'is not taken from a file others can read or write, or from a link: a per-process secret instead',
    () => {
      for (const spoil of ['group-writable', 'link', 'garbage'] as const) {
        const dir = fresh();
        mkdirSync(dir, { recursive: true });
        const file = join(dir, 'cache-key');
        const known = 'ab'.repeat(32);
        if (spoil === 'link') {
          writeFileSync(join(dir, 'elsewhere'), known, { mode: 0o600 });
          symlinkSync(join(dir, 'elsewhere'), file);
        } else {
          writeFileSync(file, spoil === 'garbage' ? 'not hex' : known, { mode: 0o600 });
          if (spoil === 'group-writable') chmodSync(file, 0o620);
        }
        const used = cacheSecret(dir);
        expect(used.toString('hex'), spoil).not.toBe(known);
        expect(used).toHaveLength(32);
        // The same one for the rest of the process: its entries serve it, as a cache within one process.
        expect(cacheSecret(dir), spoil).toEqual(used);
      }
    },
  );

  it('lives outside any cache directory: in the OS per-user cache directory', () => {
    expect(userCacheRoot({ XDG_CACHE_HOME: '/xdg' })).toBe(
      process.platform === 'linux' ? join('/xdg', 'vitest-adcp') : userCacheRoot({}),
    );
  });
});

describe("the main process's user cache directory", () => {
  it("is this process's, and its key the one used, once named (useMainCacheRoot), whatever its own environment says", () => {
    const main = fresh();
    const ownRoot = userCacheRoot();
    const ownKey = cacheSecret(undefined, {});
    useMainCacheRoot(main);
    try {
      expect(userCacheRoot()).toBe(main);
      // A caller that names an environment of its own gets that one's.
      expect(userCacheRoot({ XDG_CACHE_HOME: '/xdg' })).toBe(
        process.platform === 'linux' ? join('/xdg', 'vitest-adcp') : userCacheRoot({}),
      );
      const key = cacheSecret(undefined, {});
      expect(readFileSync(join(main, 'cache-key'), 'utf8').trim()).toBe(key.toString('hex'));
      expect(key.equals(ownKey)).toBe(false);
    } finally {
      useMainCacheRoot(undefined);
    }
    expect(userCacheRoot()).toBe(ownRoot);
    expect(cacheSecret(undefined, {}).equals(ownKey)).toBe(true);
  });
});

describe('a planted validator', () => {
  it('is never run: the schema is compiled again', () => {
    const dir = fresh();
    const cache = new ValidatorCache(dir, 'salt');
    const key = cache.key('x.json', [{ path: 'x.json', digest: 'd' }]);
    const marker = join(scratch, 'validator-ran');
    // Correct name, code that would make every answer valid (and leave a mark).
    mkdirSync(join(dir, 'validators'), { recursive: true });
    writeFileSync(
      join(dir, 'validators', `${key}.cjs`),
      `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); module.exports = function validate() { validate.errors = null; return true; }; module.exports.default = module.exports;`,
    );
    expect(cache.load(key)).toBeUndefined();
    expect(() => readFileSync(marker)).toThrow();
    // What we store ourselves is read back.
    cache.store(
      key,
      `"use strict"; module.exports = function validate() { return false; }; module.exports.default = module.exports;`,
    );
    expect(files(dir, 'validators')).toHaveLength(1);
    expect(cache.load(key)?.({})).toBe(false);
  });
});

describe('the default cache directory', () => {
  it("is Vite's inside a package, the OS per-user cache directory outside any", () => {
    const inPackage = fresh();
    mkdirSync(join(inPackage, 'sub'), { recursive: true });
    writeFileSync(join(inPackage, 'package.json'), '{}');
    expect(packageRoot(join(inPackage, 'sub'))).toBe(inPackage);
    expect(defaultCacheDir(join(inPackage, 'sub'), join(inPackage, 'node_modules', '.vite'))).toBe(
      join(inPackage, 'node_modules', '.vite', 'vitest-adcp'),
    );
    const outside = mkdtempSync(join(tmpdir(), 'adcp-no-package-'));
    try {
      if (packageRoot(outside) !== undefined) return; // a package.json above the temp directory: nothing to show here
      const dir = defaultCacheDir(outside, join(outside, 'node_modules', '.vite'), { XDG_CACHE_HOME: '/xdg' });
      expect(dir.startsWith(outside)).toBe(false);
      expect(dir).toBe(join(userCacheRoot({ XDG_CACHE_HOME: '/xdg' }), 'cache'));
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
