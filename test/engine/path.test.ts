import { describe, expect, it } from 'vitest';
import {
  MAX_WILDCARD_VALUES,
  parsePath,
  PathSyntaxError,
  resolvePath,
  setPath,
  toJsonPointer,
} from '../../src/model/path.js';

describe('storyboard paths', () => {
  it('parses dotted keys, indexes and wildcards', () => {
    expect(parsePath('accounts[0].account_id')).toEqual(['accounts', 0, 'account_id']);
    expect(parsePath('products[*].format_ids[*]')).toEqual(['products', '*', 'format_ids', '*']);
    expect(parsePath('$.a.b')).toEqual(['a', 'b']);
    expect(() => parsePath('a..b')).toThrow(/empty segment/);
  });

  it('resolves to a value and an RFC 6901 pointer', () => {
    const doc = { adcp: { major_versions: [3] }, 'a/b': { '~k': 1 } };
    expect(resolvePath(doc, 'adcp.major_versions[0]')).toEqual({
      found: true,
      value: 3,
      pointer: '/adcp/major_versions/0',
    });
    expect(resolvePath(doc, 'adcp.missing.deeper')).toMatchObject({ found: false, pointer: '/adcp/missing' });
    expect(toJsonPointer(['a/b', '~k'])).toBe('/a~1b/~0k');
  });

  it('does not read inherited properties; `length` of an array is its item count (the 3.1 corpus: rights.length)', () => {
    expect(resolvePath({}, 'constructor').found).toBe(false);
    expect(resolvePath({ a: [1] }, 'a.constructor').found).toBe(false);
    expect(resolvePath({}, 'length').found).toBe(false);
    expect(resolvePath({ rights: [1, 2, 3] }, 'rights.length')).toEqual({
      found: true,
      value: 3,
      pointer: '/rights/length',
    });
    expect(resolvePath({ rights: { length: 'own' } }, 'rights.length').value).toBe('own');
  });

  it('reads `[]` as the `[*]` wildcard (the 3.1 corpus writes allowed_actions[])', () => {
    const doc = { products: [{ allowed_actions: ['a', 'b'] }, { allowed_actions: ['c'] }] };
    expect(resolvePath(doc, 'products[0].allowed_actions[]').value).toEqual(['a', 'b']);
    expect(resolvePath(doc, 'products[].allowed_actions[]').value).toEqual(['a', 'b', 'c']);
    expect(resolvePath(doc, 'products[].allowed_actions[]').matches![2]!.pointer).toBe('/products/1/allowed_actions/0');
  });

  it('flattens wildcards', () => {
    const doc = { products: [{ format_ids: [{ id: 'a' }, { id: 'b' }] }, { format_ids: [{ id: 'c' }] }] };
    const r = resolvePath(doc, 'products[*].format_ids[*].id');
    expect(r.value).toEqual(['a', 'b', 'c']);
    expect(r.matches![2]!.pointer).toBe('/products/1/format_ids/0/id');
  });

  it('writes with setPath, creating containers', () => {
    const target: Record<string, unknown> = {};
    setPath(target, 'format_ids[0].id', 'x');
    expect(target).toEqual({ format_ids: [{ id: 'x' }] });
  });
});

describe('storyboard paths: edges', () => {
  it('parses quoted bracket keys, a bare "$", and rejects what is not a path', () => {
    expect(parsePath('a["x.y"].b')).toEqual(['a', 'x.y', 'b']);
    expect(parsePath("a['k[0]']")).toEqual(['a', 'k[0]']);
    expect(parsePath('$')).toEqual([]);
    expect(parsePath('')).toEqual([]);
    expect(parsePath('a[12][3]')).toEqual(['a', 12, 3]);
    expect(() => parsePath('.a')).toThrow(PathSyntaxError);
    expect(() => parsePath('a[x]')).toThrow(/invalid path "a\[x\]": unexpected character at 1/);
    expect(() => parsePath('$.a..b')).toThrow(/invalid path "\$\.a\.\.b": empty segment/);
  });

  it('a dotted number is a key, not an index', () => {
    expect(resolvePath([5], '0')).toMatchObject({ found: false, pointer: '/0' });
    expect(resolvePath({ 0: 'zero' }, '0')).toEqual({ found: true, value: 'zero', pointer: '/0' });
    expect(resolvePath({ a: ['x'] }, 'a[0]')).toEqual({ found: true, value: 'x', pointer: '/a/0' });
    expect(resolvePath({ a: { 0: 'y' } }, 'a[0]')).toEqual({ found: true, value: 'y', pointer: '/a/0' });
  });

  it('null is a value; nothing lies below it', () => {
    expect(resolvePath({ a: null }, 'a')).toEqual({ found: true, value: null, pointer: '/a' });
    expect(resolvePath({ a: null }, 'a.b.c')).toEqual({ found: false, value: undefined, pointer: '/a/b' });
    expect(resolvePath({ a: 'text' }, 'a.length')).toMatchObject({ found: false, pointer: '/a/length' });
    expect(resolvePath({ a: 1 }, '')).toEqual({ found: true, value: { a: 1 }, pointer: '' });
  });

  it('wildcards skip what is not an array; no match is not found; the pointer is the prefix before the first wildcard', () => {
    const doc = { items: [{ id: 'a' }, { other: 1 }, { id: null }], obj: { id: 'x' } };
    const r = resolvePath(doc, 'items[*].id');
    expect(r).toEqual({
      found: true,
      value: ['a', null],
      pointer: '/items',
      matches: [
        { value: 'a', pointer: '/items/0/id' },
        { value: null, pointer: '/items/2/id' },
      ],
    });
    expect(resolvePath(doc, 'obj[*].id')).toEqual({ found: false, value: [], pointer: '/obj', matches: [] });
    expect(resolvePath(doc, 'items[*].nope')).toMatchObject({ found: false, value: [] });
    expect(resolvePath([[1, 2], 'x', [3]], '[*][*]').value).toEqual([1, 2, 3]);
  });

  it('caps a wildcard fan-out at MAX_WILDCARD_VALUES', () => {
    const wide = { a: Array.from({ length: MAX_WILDCARD_VALUES + 5 }, (_, i) => i) };
    expect(resolvePath(wide, 'a[*]').matches).toHaveLength(MAX_WILDCARD_VALUES);
    const nested = { a: [Array.from({ length: MAX_WILDCARD_VALUES }, (_, i) => i), [1, 2, 3]] };
    const r = resolvePath(nested, 'a[*][*]');
    expect(r.matches).toHaveLength(MAX_WILDCARD_VALUES);
    expect(r.matches!.at(-1)!.pointer).toBe(`/a/0/${MAX_WILDCARD_VALUES - 1}`);
  });

  it('setPath keeps what exists, replaces null containers, and refuses wildcards', () => {
    const target: Record<string, unknown> = { keep: 1, a: { b: 2 }, n: null };
    setPath(target, 'a.c', 3);
    setPath(target, 'n.k', 'v');
    setPath(target, 'm[1][0]', 'z');
    setPath(target, 'top', 't');
    expect(target).toEqual({ keep: 1, a: { b: 2, c: 3 }, n: { k: 'v' }, m: [undefined, ['z']], top: 't' });
    expect(Array.isArray((target.m as unknown[])[1])).toBe(true);
    expect(() => setPath(target, 'a[*].b', 1)).toThrow(/wildcards cannot be written to/);
  });
});

describe('setPath refuses prototype segments', () => {
  it('throws on __proto__, constructor and prototype, and Object.prototype stays clean', () => {
    for (const path of ['__proto__.x', 'a.constructor.prototype.x', 'prototype']) {
      expect(() => setPath({}, path, 1)).toThrow(/cannot be written to \(it reaches the object's prototype\)/);
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('replaces a scalar in the way instead of writing into it', () => {
    const root: Record<string, unknown> = { a: 'text' };
    setPath(root, 'a.b', 1);
    expect(root).toEqual({ a: { b: 1 } });
  });
});
