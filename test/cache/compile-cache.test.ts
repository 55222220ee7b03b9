/**
 * The compile cache's key covers every input of the compile (src/compile/compile-cache.ts): the vector folder's
 * files, the test kit's existence; a compile that failed to load is not kept. The plugin's order of calls: key, load,
 * compile and store on a miss.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CompileCache } from '../../src/compile/compile-cache.js';

const scratch = mkdtempSync(join(tmpdir(), 'adcp-compile-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const corpus = join(scratch, 'corpus');
const vectors = join(corpus, 'test-vectors', 'request-signing', 'positive');
mkdirSync(vectors, { recursive: true });
mkdirSync(join(corpus, 'test-kits'), { recursive: true });
mkdirSync(join(corpus, 'universal'), { recursive: true });
const file = join(corpus, 'universal', 'x.yaml');
const entry = (testKit?: string) => ({
  code: 'code',
  map: { version: 3 } as never,
  diagnostics: [],
  ...(testKit ? { testKit } : {}),
});
const cacheFor = (dir: string) => new CompileCache(dir, JSON.stringify({ kitRoot: corpus }));

describe('the compile cache', () => {
  it('a vector added, edited or removed is a new key', () => {
    const dir = join(scratch, 'c1');
    writeFileSync(join(vectors, '001.json'), '{}');
    const before = cacheFor(dir).key(file, 'source');
    expect(cacheFor(dir).key(file, 'source')).toBe(before);
    writeFileSync(join(vectors, '001.json'), '{"name":"edited"}');
    const edited = cacheFor(dir).key(file, 'source');
    writeFileSync(join(vectors, '002.json'), '{}');
    const added = cacheFor(dir).key(file, 'source');
    rmSync(join(vectors, '001.json'));
    const removed = cacheFor(dir).key(file, 'source');
    expect(new Set([before, edited, added, removed]).size).toBe(4);
  });

  it('an entry whose test kit appeared or disappeared since is not served', () => {
    const dir = join(scratch, 'c2');
    const kit = join(corpus, 'test-kits', 'kit.yaml');
    writeFileSync(kit, 'auth: {}');
    let cache = cacheFor(dir);
    let key = cache.key(file, 'with kit');
    cache.store(key, entry('test-kits/kit.yaml'));
    cache = cacheFor(dir);
    key = cache.key(file, 'with kit');
    expect(cache.load(key)?.code).toBe('code');
    rmSync(kit);
    cache = cacheFor(dir);
    expect(cache.load(cache.key(file, 'with kit'))).toBeUndefined();
  });

  it('a compile that failed to load is not kept; a load without its key is a miss', () => {
    const dir = join(scratch, 'c3');
    const cache = cacheFor(dir);
    const key = cache.key(file, 'broken');
    cache.store(key, {
      ...entry(),
      diagnostics: [{ severity: 'error', rule: 'r', message: 'm', file, line: 1, column: 1 }] as never,
    });
    const again = cacheFor(dir);
    expect(again.load(again.key(file, 'broken'))).toBeUndefined();
    // The same entry without the error is kept, and read through its key only.
    cache.store(key, entry());
    const next = cacheFor(dir);
    expect(next.load(key)).toBeUndefined();
    expect(next.load(next.key(file, 'broken'))?.code).toBe('code');
  });
});
