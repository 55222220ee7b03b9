/**
 * What a compiled module that names its storyboard by digest calls as it runs (src/vitest/suite.ts
 * `storyboardStored`): the storyboard the main process stored for it, or an error that says what happened and what to
 * do. The store itself: test/cache/stored-storyboards.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useMainCacheRoot } from '../../src/cache/disk-cache.js';
import { StoredStoryboards, storyboardDigest } from '../../src/cache/stored-storyboards.js';
import { storyboardStored } from '../../src/vitest/suite.js';

describe('storyboardStored', () => {
  it("reads the storyboard from this user's store, as the main process kept it", () => {
    const storyboard = { id: 'stored_storyboard_test', title: 'T', phases: [] };
    const json = JSON.stringify(storyboard);
    const store = StoredStoryboards.open()!;
    expect(store.keep(storyboardDigest(json), json)).toBe(true);
    expect(storyboardStored(storyboardDigest(json))).toEqual(storyboard);
  });

  it('fails the module with what happened and what to do when it is not there', () => {
    const missing = storyboardDigest('{"id":"never stored"}');
    expect(() => storyboardStored(missing)).toThrow(
      new RegExp(`the compiled storyboard ${missing} is not in .*vitest-adcp.storyboards .*Run again`),
    );
  });

  // XDG_CACHE_HOME names the user cache directory on Linux only.
  it.runIf(process.platform === 'linux')(
    "reads the store in the main process's user cache directory, once named (useMainCacheRoot)",
    () => {
      const storyboard = { id: 'stored_elsewhere_test', title: 'T', phases: [] };
      const json = JSON.stringify(storyboard);
      const root = mkdtempSync(join(tmpdir(), 'adcp-main-store-'));
      try {
        // The main process's store: another user cache directory than this process's (`test.env` moved the tests').
        expect(StoredStoryboards.open({ XDG_CACHE_HOME: root })!.keep(storyboardDigest(json), json)).toBe(true);
        expect(StoredStoryboards.open()!.read(storyboardDigest(json))).toBeUndefined();
        useMainCacheRoot(join(root, 'vitest-adcp'));
        expect(StoredStoryboards.open()!.read(storyboardDigest(json))).toBe(json);
      } finally {
        useMainCacheRoot(undefined);
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
});
