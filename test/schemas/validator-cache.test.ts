/**
 * Compiled schema validators kept between runs (src/schemas/validator-cache.ts):
 * a registry with a cache directory gives the verdicts a registry without one
 * gives, the next registry reads what the first wrote, a changed schema (or one
 * it references) is compiled again, and a broken entry is compiled again; V8's code cache of an entry is made on its
 * first load, used by the next, and made again when V8 refuses it.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskCache } from '../../src/cache/disk-cache.js';
import { defaultSchemasDir } from '../../src/corpus.js';
import { SchemaRegistry } from '../../src/schemas/registry.js';

const schemasDir = defaultSchemasDir()!;
const scratch = mkdtempSync(join(tmpdir(), 'adcp-validators-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const REF = 'media-buy/get-products-response.json';
const answers = [
  { products: [] },
  { products: [{ product_id: 'p' }] },
  { nothing: true },
  { errors: [{ code: 'X', message: 'm' }] },
];
/** The stored validators (their code: `.cjs`), or V8's code caches of them (`.v8`). */
const entries = (cacheDir: string, extension = '.cjs') =>
  readdirSync(join(cacheDir, 'validators')).filter((name) => name.endsWith(extension));

describe('validators from the cache directory', () => {
  it('give the verdicts a fresh compile gives, and the next registry reads them', () => {
    const cacheDir = join(scratch, 'same');
    const expected = answers.map((a) => new SchemaRegistry(schemasDir).validate(REF, a));
    expect(answers.map((a) => new SchemaRegistry(schemasDir, cacheDir).validate(REF, a))).toEqual(expected);
    expect(entries(cacheDir)).toHaveLength(1);
    // An entry that accepts everything, planted beside ours, is never run (src/cache/disk-cache.ts); the same code
    // written through the cache (signed with this user's secret) is: a registry that reads the cache now says "valid".
    const file = join(cacheDir, 'validators', entries(cacheDir)[0]!);
    const real = readFileSync(file, 'utf8');
    const accept =
      '"use strict"; module.exports = function validate() { validate.errors = null; return true; }; module.exports.default = module.exports;';
    writeFileSync(file, accept);
    expect(new SchemaRegistry(schemasDir, cacheDir).validate(REF, { nothing: true }).valid).toBe(false);
    new DiskCache(cacheDir, 'validators', '.cjs', []).write(basename(file, '.cjs'), accept);
    expect(new SchemaRegistry(schemasDir, cacheDir).validate(REF, { nothing: true }).valid).toBe(true);
    // A broken entry is compiled again, authentic or not; so is an authentic one that gives no function.
    writeFileSync(file, 'this is not javascript {');
    expect(answers.map((a) => new SchemaRegistry(schemasDir, cacheDir).validate(REF, a))).toEqual(expected);
    for (const authentic of ['this is not javascript {', '"use strict"; module.exports = 42;']) {
      new DiskCache(cacheDir, 'validators', '.cjs', []).write(basename(file, '.cjs'), authentic);
      expect(answers.map((a) => new SchemaRegistry(schemasDir, cacheDir).validate(REF, a))).toEqual(expected);
    }
    writeFileSync(file, real);
    expect(answers.map((a) => new SchemaRegistry(schemasDir, cacheDir).validate(REF, a))).toEqual(expected);
    expect(expected.some((v) => !v.valid)).toBe(true);
  });

  it('are stored as ASCII, and a schema with other characters validates as when compiled fresh', () => {
    const dir = join(scratch, 'unicode-schemas');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 't.json'),
      JSON.stringify({
        $id: '/schemas/t/t.json',
        description: '— prose, dropped before compiling —',
        type: 'object',
        required: ['ключ'],
        properties: {
          ключ: { enum: ['café — x', '😀'] },
          p: { type: 'string', pattern: '^é+$' },
        },
      }),
    );
    const cacheDir = join(scratch, 'unicode');
    const documents = [{ ключ: 'café — x', p: 'éé' }, { ключ: '😀', p: 'e' }, {}, { ключ: 'cafe — x' }];
    const fresh = documents.map((d) => new SchemaRegistry(dir).validate('t.json', d));
    expect(fresh.map((v) => v.valid)).toEqual([true, false, false, false]);
    expect(documents.map((d) => new SchemaRegistry(dir, cacheDir).validate('t.json', d))).toEqual(fresh);
    const [entry] = entries(cacheDir);
    const code = readFileSync(join(cacheDir, 'validators', entry!), 'utf8');
    expect(code).toMatch(/\\u043a/); // к, escaped
    expect(/[^\x00-\x7f]/.test(code)).toBe(false);
    // Read back from the cache: the same verdicts and errors.
    expect(documents.map((d) => new SchemaRegistry(dir, cacheDir).validate('t.json', d))).toEqual(fresh);
  });

  it('a changed referenced schema gets a new entry, never the old code', () => {
    const dir = join(scratch, 'schemas');
    cpSync(schemasDir, dir, { recursive: true });
    const cacheDir = join(scratch, 'changed');
    const answer = { products: [{ product_id: 'p', name: 'n' }] };
    const before = new SchemaRegistry(dir, cacheDir).validate(REF, answer);
    // core/product.json is only reached through get-products-response.json's $refs.
    const productFile = join(dir, 'core', 'product.json');
    const product = JSON.parse(readFileSync(productFile, 'utf8'));
    product.required = [...(product.required ?? []), 'x_required_by_this_test'];
    writeFileSync(productFile, JSON.stringify(product));
    const after = new SchemaRegistry(dir, cacheDir).validate(REF, answer);
    expect(entries(cacheDir)).toHaveLength(2);
    expect(after.valid).toBe(false);
    expect(after.errors.map((e) => e.message).join('\n')).toContain('x_required_by_this_test');
    expect(before.errors.map((e) => e.message).join('\n')).not.toContain('x_required_by_this_test');
  });

  it("keep V8's code cache of an entry from its first load on: the next loads use it, one V8 refuses is made again", () => {
    const expected = answers.map((a) => new SchemaRegistry(schemasDir).validate(REF, a));
    /** The answers graded by a registry of its own, as a run's process has. */
    const graded = (cacheDir: string) => {
      const registry = new SchemaRegistry(schemasDir, cacheDir);
      return answers.map((a) => registry.validate(REF, a));
    };
    // The cache directory as the next process finds it: a copy under a path of its own. (V8 serves a script of the
    // same text and name it compiled before in this process from memory, without looking at the code cache.)
    let generation = 0;
    const nextProcess = () => {
      const dir = join(scratch, `code-cache-${++generation}`);
      if (generation > 1) cpSync(join(scratch, `code-cache-${generation - 1}`), dir, { recursive: true });
      return dir;
    };
    const codeCache = (cacheDir: string) => join(cacheDir, 'validators', entries(cacheDir, '.v8')[0]!);
    // A compile from the schemas runs ajv's own code: the stored code has not been compiled by V8 yet.
    let cacheDir = nextProcess();
    expect(graded(cacheDir)).toEqual(expected);
    expect(entries(cacheDir, '.v8')).toHaveLength(0);
    // Its first load compiles it and keeps V8's cache of it.
    cacheDir = nextProcess();
    expect(graded(cacheDir)).toEqual(expected);
    expect(entries(cacheDir, '.v8')).toHaveLength(1);
    // The next load uses it (V8 takes it: nothing is written again, the file is the same one).
    cacheDir = nextProcess();
    const taken = statSync(codeCache(cacheDir)).ino;
    expect(graded(cacheDir)).toEqual(expected);
    expect(statSync(codeCache(cacheDir)).ino).toBe(taken);
    // One V8 refuses — authentic, but not V8's cache of this code — is made again on the next load: written anew.
    cacheDir = nextProcess();
    const refusedFile = codeCache(cacheDir);
    new DiskCache(cacheDir, 'validators', '.v8', []).writeBytes(basename(refusedFile, '.v8'), Buffer.from('no cache'));
    const refused = statSync(refusedFile).ino;
    expect(graded(cacheDir)).toEqual(expected);
    expect(statSync(refusedFile).ino).not.toBe(refused);
    expect(readFileSync(refusedFile).length).toBeGreaterThan(1000);
    // One planted without the MAC is never handed to V8: read as missing, and made again.
    cacheDir = nextProcess();
    writeFileSync(codeCache(cacheDir), 'planted');
    expect(graded(cacheDir)).toEqual(expected);
    expect(readFileSync(codeCache(cacheDir), 'utf8')).not.toBe('planted');
    expect(entries(cacheDir)).toHaveLength(1);
    expect(entries(cacheDir, '.v8')).toHaveLength(1);
  });
});
