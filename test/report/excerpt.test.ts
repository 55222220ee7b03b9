import { describe, expect, it } from 'vitest';
import { excerptAround } from '../../src/report/excerpt.js';

describe('excerptAround', () => {
  const answer = {
    products: [
      { product_id: 'p1', name: 'One', channels: ['display'], format_ids: [{ id: 'f' }], a: 1, b: 2, c: 3 },
      { product_id: 'p2', name: 'Two' },
      { product_id: 'p3', name: 'Three' },
    ],
    total: 3,
    context: { correlation_id: 'x' },
  };

  it('keeps the branch down to the pointer and up to three scalar siblings per level, counting the rest', () => {
    expect(excerptAround(answer, '/products/1/name')).toEqual({
      products: ['… 1 item before', { product_id: 'p2', name: 'Two' }, '… 1 item after'],
      total: 3,
      '…': '1 more key',
    });
    expect(excerptAround(answer, '/products/0/format_ids')).toEqual({
      products: [
        { product_id: 'p1', name: 'One', format_ids: [{ id: 'f' }], a: 1, '…': '3 more keys' },
        '… 2 items after',
      ],
      total: 3,
      '…': '1 more key',
    });
  });

  it('keeps the value at the pointer whole', () => {
    expect(excerptAround(answer, '/context')).toEqual({
      context: { correlation_id: 'x' },
      total: 3,
      '…': '1 more key',
    });
  });

  it('where the path breaks off, lists what is there instead', () => {
    expect(excerptAround(answer, '/products/0/price/cpm')).toEqual({
      products: [
        { product_id: 'p1', name: 'One', channels: '[1 item]', format_ids: '[1 item]', a: 1, b: 2, c: 3 },
        '… 2 items after',
      ],
      total: 3,
      '…': '1 more key',
    });
    expect(excerptAround(answer, '/products/7')).toEqual({
      products: ['… 3 items, none at index 7'],
      total: 3,
      '…': '1 more key',
    });
    expect(excerptAround(answer, '/products/first')).toEqual({
      products: ['… 3 items, none at index first'],
      total: 3,
      '…': '1 more key',
    });
    expect(excerptAround({ one: [] }, '/one/0')).toEqual({ one: ['… 0 items, none at index 0'] });
    const wide = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, { i }]));
    expect(excerptAround(wide, '/missing')).toEqual({
      ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, '{…}'])),
      '…': '3 more keys',
    });
  });

  it('reads escaped pointer tokens, and returns the whole value for the root pointer or a scalar', () => {
    expect(excerptAround({ 'a/b': { 'c~d': 1 }, x: 2 }, '/a~1b/c~0d')).toEqual({ 'a/b': { 'c~d': 1 }, x: 2 });
    expect(excerptAround(answer, '')).toBe(answer);
    expect(excerptAround('text', '/a')).toBe('text');
    expect(excerptAround([1, [2, 3]], '/1/0')).toEqual(['… 1 item before', [2, '… 1 item after']]);
  });
});
