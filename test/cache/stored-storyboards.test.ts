/**
 * The store of test modules' storyboards (src/cache/stored-storyboards.ts): kept under their digest in this user's
 * private cache directory, read back whole or not at all. Its use by the plugin (stored again whichever way a module
 * came): test/plugin/module-cache.test.ts; by the worker: test/vitest/stored-storyboard.test.ts; whole runs: every e2e
 * run of the storyboard project.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoredStoryboards, storedStoryboardsDir, storyboardDigest } from '../../src/cache/stored-storyboards.js';

const scratch = mkdtempSync(join(tmpdir(), 'adcp-stored-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const json = JSON.stringify({ id: 'sb', phases: [] });
const digest = storyboardDigest(json);

describe('stored storyboards', () => {
  it('the digest is the SHA-256 of the JSON text', () => {
    expect(digest).toBe(createHash('sha256').update(json).digest('hex'));
  });

  it("keeps a storyboard under its digest in this user's private cache directory, once, and reads it back", () => {
    const env = { XDG_CACHE_HOME: join(scratch, 'a') };
    const store = StoredStoryboards.open(env)!;
    expect(storedStoryboardsDir(env)).toBe(join(scratch, 'a', 'vitest-adcp', 'storyboards'));
    expect(store.read(digest)).toBeUndefined();
    expect(store.keep(digest, json)).toBe(true);
    expect(store.read(digest)).toBe(json);
    const file = join(storedStoryboardsDir(env), `${digest}.json`);
    expect(statSync(storedStoryboardsDir(env)).mode & 0o777).toBe(0o700);
    // Kept once: a second keep writes nothing (a write puts a new file in place: another inode).
    const inode = statSync(file).ino;
    expect(store.keep(digest, json)).toBe(true);
    expect(statSync(file).ino).toBe(inode);
    // Another process of this user (the worker) reads it.
    expect(StoredStoryboards.open(env)!.read(digest)).toBe(json);
  });

  it('reads nothing of an entry that is not whole, or not the one written under that digest', () => {
    const env = { XDG_CACHE_HOME: join(scratch, 'b') };
    const store = StoredStoryboards.open(env)!;
    store.keep(digest, json);
    const file = join(storedStoryboardsDir(env), `${digest}.json`);
    const whole = readFileSync(file, 'utf8');
    writeFileSync(file, whole.slice(0, -3));
    expect(store.read(digest)).toBeUndefined();
    writeFileSync(file, whole.replace('"sb"', '"sc"'));
    expect(store.read(digest)).toBeUndefined();
    // Under another digest, the same bytes are not an entry.
    writeFileSync(join(storedStoryboardsDir(env), `${storyboardDigest('{}')}.json`), whole);
    expect(store.read(storyboardDigest('{}'))).toBeUndefined();
  });

  it.skipIf(process.platform === 'win32')(
    'is no store where others can write, and says when it could not keep one',
    () => {
      const env = { XDG_CACHE_HOME: join(scratch, 'c') };
      expect(StoredStoryboards.open(env)).toBeDefined();
      chmodSync(join(scratch, 'c', 'vitest-adcp'), 0o777);
      expect(StoredStoryboards.open(env)).toBeUndefined();
      chmodSync(join(scratch, 'c', 'vitest-adcp'), 0o700);
      const store = StoredStoryboards.open(env)!;
      // Its directory gone and a file in its place: nothing can be written there.
      rmSync(storedStoryboardsDir(env), { recursive: true });
      writeFileSync(storedStoryboardsDir(env), '');
      expect(store.keep(digest, json)).toBe(false);
    },
  );
});
