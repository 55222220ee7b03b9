import { describe, expect, it } from 'vitest';
import { parsePath, resolvePath, setPath, toJsonPointer } from '../../src/engine/path.js';

describe('storyboard paths', () => {
  it('parses dotted keys, indexes and wildcards', () => {
    expect(parsePath('accounts[0].account_id')).toEqual(['accounts', 0, 'account_id']);
    expect(parsePath('products[*].format_ids[*]')).toEqual(['products', '*', 'format_ids', '*']);
    expect(parsePath('$.a.b')).toEqual(['a', 'b']);
    expect(() => parsePath('a..b')).toThrow(/empty segment/);
  });

  it('resolves to a value and an RFC 6901 pointer', () => {
    const doc = { adcp: { major_versions: [3] }, 'a/b': { '~k': 1 } };
    expect(resolvePath(doc, 'adcp.major_versions[0]')).toEqual({ found: true, value: 3, pointer: '/adcp/major_versions/0' });
    expect(resolvePath(doc, 'adcp.missing.deeper')).toMatchObject({ found: false, pointer: '/adcp/missing' });
    expect(toJsonPointer(['a/b', '~k'])).toBe('/a~1b/~0k');
  });

  it('does not read inherited properties', () => {
    expect(resolvePath({}, 'constructor').found).toBe(false);
    expect(resolvePath([1], 'length').found).toBe(false);
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
