import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DiskCache } from '../../src/cache/disk-cache.js';
import { kitCacheSalt } from '../../src/storyboard/test-kit.js';
import {
  StoryboardLoadError,
  clearTestKitCache,
  loadTestKit,
  parseTestKit,
  resolveTestKitPath,
} from '../../src/storyboard/index.js';

const corpusRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../node_modules/@adcp/sdk/compliance/cache/3.0.6',
);

/** The trees this file made, removed at its end. */
const trees: string[] = [];
afterAll(() => trees.forEach((root) => rmSync(root, { recursive: true, force: true })));

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'vitest-adcp-kit-'));
  trees.push(root);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  return root;
}

afterEach(() => clearTestKitCache());

describe('resolveTestKitPath', () => {
  const root = tree({
    'test-kits/acme.yaml': 'id: acme\n',
    'universal/test-kits/local.yaml': 'id: local\n',
    'universal/own.yaml': 'id: own\n',
  });
  const storyboardFile = path.join(root, 'universal/security.yaml');

  it('resolves ./ and ../ relative to the storyboard file', () => {
    expect(resolveTestKitPath('./own.yaml', { storyboardFile, corpusRoot: '/elsewhere' })).toBe(
      path.join(root, 'universal/own.yaml'),
    );
    expect(resolveTestKitPath('../test-kits/acme.yaml', { storyboardFile })).toBe(
      path.join(root, 'test-kits/acme.yaml'),
    );
  });

  it('prefers the corpus root when the kit exists there', () => {
    expect(resolveTestKitPath('test-kits/acme.yaml', { storyboardFile, corpusRoot: root })).toBe(
      path.join(root, 'test-kits/acme.yaml'),
    );
  });

  it('falls back to the storyboard directory, then to its ancestors', () => {
    expect(resolveTestKitPath('test-kits/local.yaml', { storyboardFile, corpusRoot: root })).toBe(
      path.join(root, 'universal/test-kits/local.yaml'),
    );
    expect(resolveTestKitPath('test-kits/acme.yaml', { storyboardFile })).toBe(path.join(root, 'test-kits/acme.yaml'));
    expect(resolveTestKitPath('test-kits/missing.yaml', { storyboardFile, corpusRoot: root })).toBe(
      path.join(root, 'universal/test-kits/missing.yaml'),
    );
  });
});

describe('loadTestKit', () => {
  it('loads every test kit of the corpus as frozen plain data', () => {
    const kits = readdirSync(path.join(corpusRoot, 'test-kits')).map((f) =>
      loadTestKit(path.join(corpusRoot, 'test-kits', f)),
    );
    expect(kits).toHaveLength(8);
    const acme = loadTestKit(path.join(corpusRoot, 'test-kits/acme-outdoor.yaml'));
    expect(acme.auth).toMatchObject({ api_key: 'demo-acme-outdoor-v1', probe_task: 'list_creatives' });
    expect(Object.isFrozen(acme.auth)).toBe(true);
  });

  it('caches per absolute path and reloads when the file changes', () => {
    const root = tree({ 'kit.yaml': 'id: one\n' });
    const file = path.join(root, 'kit.yaml');
    const first = loadTestKit(file);
    expect(loadTestKit(file)).toBe(first);
    writeFileSync(file, 'id: two\n');
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(loadTestKit(file).id).toBe('two');
  });

  it('accepts HTTP Basic credentials (AdCP 3.1)', () => {
    const result = parseTestKit(
      'id: k\nauth:\n  probe_task: list_creatives\n  basic: { username: demo, password: demo-secret }\n',
      'k.yaml',
    );
    expect(result).toMatchObject({
      ok: true,
      testKit: { auth: { basic: { username: 'demo', password: 'demo-secret' } } },
    });
  });

  it('reports malformed kits with file:line:col', () => {
    const root = tree({ 'bad.yaml': 'id: k\nauth:\n  basic:\n    username: 42\n' });
    const file = path.join(root, 'bad.yaml');
    expect(() => loadTestKit(file)).toThrowError(StoryboardLoadError);
    expect(() => loadTestKit(file)).toThrowError(
      `${file}:4:15: [test_kit_shape] test kit auth.basic.username must be a string`,
    );
    expect(parseTestKit('auth: [\n', 'k.yaml')).toMatchObject({
      ok: false,
      diagnostics: [{ rule: 'yaml_syntax', file: 'k.yaml' }],
    });
  });

  it('reports a missing kit where it is referenced', () => {
    expect(() =>
      loadTestKit('/nonexistent/kit.yaml', { referencedFrom: { file: 'sb.yaml', line: 7, column: 13 } }),
    ).toThrowError(/^sb\.yaml:7:13: \[test_kit_not_found\] test kit not found: \/nonexistent\/kit\.yaml/);
  });
});

describe('loadTestKit with a cache directory (a corpus kit)', () => {
  const kitCache = (cacheDir: string) => new DiskCache(cacheDir, 'test-kits', '.json', kitCacheSalt());
  const entries = (cacheDir: string) => {
    try {
      return readdirSync(path.join(cacheDir, 'test-kits'));
    } catch {
      return [];
    }
  };

  it('keeps a parsed kit, and the next process reads it from there instead of parsing the YAML', () => {
    const root = tree({ 'kit.yaml': 'id: k\nauth: { api_key: demo-k, probe_task: list_creatives }\n' });
    const file = path.join(root, 'kit.yaml');
    const cacheDir = path.join(root, 'cache');
    const parsed = loadTestKit(file, { cache: { dir: cacheDir, corpusRoot: root } });
    expect(entries(cacheDir)).toHaveLength(1);
    clearTestKitCache();
    expect(loadTestKit(file, { cache: { dir: cacheDir, corpusRoot: root } })).toEqual(parsed);
    // What the cache holds under the text's key is what a later load serves: the entry, not a parse of the file.
    const source = 'id: k\nauth: { api_key: demo-k, probe_task: list_creatives }\n';
    kitCache(cacheDir).write(kitCache(cacheDir).key(source), JSON.stringify({ id: 'from-the-cache' }));
    clearTestKitCache();
    const served = loadTestKit(file, { cache: { dir: cacheDir, corpusRoot: root } });
    expect(served).toEqual({ id: 'from-the-cache' });
    expect(Object.isFrozen(served)).toBe(true);
  });

  it('an entry that is not its own (edited, or written under another secret) is never served: the kit is parsed again', () => {
    const root = tree({ 'kit.yaml': 'id: k\n' });
    const file = path.join(root, 'kit.yaml');
    const cacheDir = path.join(root, 'cache');
    loadTestKit(file, { cache: { dir: cacheDir, corpusRoot: root } });
    const [entry] = entries(cacheDir);
    const stored = path.join(cacheDir, 'test-kits', entry!);
    const text = readFileSync(stored, 'utf8');
    writeFileSync(stored, text.replace('"k"', '"planted"'));
    clearTestKitCache();
    expect(loadTestKit(file, { cache: { dir: cacheDir, corpusRoot: root } }).id).toBe('k');
  });

  it('does not keep a kit JSON cannot give back whole (YAML .inf, .nan): it is parsed every time', () => {
    const root = tree({ 'kit.yaml': 'id: k\nlimits: { window: .inf }\n' });
    const file = path.join(root, 'kit.yaml');
    const cacheDir = path.join(root, 'cache');
    expect(
      (loadTestKit(file, { cache: { dir: cacheDir, corpusRoot: root } }) as { limits?: { window?: number } }).limits
        ?.window,
    ).toBe(Infinity);
    expect(entries(cacheDir)).toEqual([]);
  });

  it('never writes a kit outside the corpus (your own may hold real credentials)', () => {
    const root = tree({ 'corpus/index.json': '{}', 'own/kit.yaml': 'id: k\nauth: { api_key: real-key }\n' });
    const cacheDir = path.join(root, 'cache');
    const kit = loadTestKit(path.join(root, 'own', 'kit.yaml'), {
      cache: { dir: cacheDir, corpusRoot: path.join(root, 'corpus') },
    });
    expect(kit.auth).toMatchObject({ api_key: 'real-key' });
    expect(entries(cacheDir)).toEqual([]);
  });
});
