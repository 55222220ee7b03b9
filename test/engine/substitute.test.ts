import { describe, expect, it } from 'vitest';
import { resolveTask, substitute } from '../../src/engine/substitute.js';

const scope = {
  context: new Map<string, unknown>([
    ['product_id', 'prod_1'],
    ['budget', { total: 5000, currency: 'USD' }],
    ['count', 3],
  ]),
  priorSteps: new Map<string, unknown>([['get_products', { products: [{ product_id: 'prod_9' }] }]]),
  testKit: { auth: { api_key: 'demo-x', probe_task: 'list_creatives' }, brand: { name: 'Acme' } },
};

describe('substitution', () => {
  it('keeps types for whole-token placeholders', () => {
    const r = substitute(
      { id: '$context.product_id', budget: '$context.budget', n: '$context.count', ids: ['$context.product_id'] },
      scope,
    );
    expect(r).toEqual({
      value: { id: 'prod_1', budget: { total: 5000, currency: 'USD' }, n: 3, ids: ['prod_1'] },
      unresolved: [],
    });
  });

  it('resolves prior_step and test kit references', () => {
    const r = substitute(
      {
        p: '{{prior_step.get_products.products[0].product_id}}',
        brand: '$test_kit.brand.name',
        text: 'for {{prior_step.get_products.products[0].product_id}} of $context.product_id',
      },
      scope,
    );
    expect(r.value).toEqual({ p: 'prod_9', brand: 'Acme', text: 'for prod_9 of prod_1' });
  });

  it('reports unresolved placeholders and never invents a value', () => {
    const r = substitute(
      { a: '$context.nope', b: '{{prior_step.failed_step.id}}', c: '{{runner.webhook_url:x}}' },
      scope,
    );
    expect(r.unresolved).toEqual(['$context.nope', '{{prior_step.failed_step.id}}', '{{runner.webhook_url:x}}']);
  });

  it('does not mutate the storyboard', () => {
    const request = { id: '$context.product_id' };
    substitute(request, scope);
    expect(request.id).toBe('$context.product_id');
  });

  it('resolves a task from the test kit with task_default as fallback', () => {
    expect(resolveTask('$test_kit.auth.probe_task', 'get_products', scope.testKit)).toBe('list_creatives');
    expect(resolveTask('$test_kit.auth.nothing', 'get_products', scope.testKit)).toBe('get_products');
    expect(resolveTask('get_products', undefined, undefined)).toBe('get_products');
  });
});

describe('substitution: placeholder forms', () => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const kit = {
    auth: { api_key: 'demo-x', probe_task: 'list_creatives', port: 8080, off: null },
    brand: { name: 'Acme' },
    'geo-1': { 'max-rate': { cpm: 2 } },
    list: Array.from({ length: 12 }, (_, i) => ({ n: i })),
  };
  const rich = {
    context: new Map<string, unknown>([
      ['product_id', 'prod_1'],
      ['budget', { total: 5000, currency: 'USD' }],
      ['count', 3],
      ['media-buy_2', 'mb_2'],
      ['list', [{ id: 'l0' }, { id: 'l1' }]],
      ['nothing', null],
      ['big', Array.from({ length: 12 }, (_, i) => ({ id: `b${i}` }))],
    ]),
    priorSteps: new Map<string, unknown>([['get-products_1', { products: [{ product_id: 'prod_9' }] }]]),
    testKit: kit,
  };

  it('a placeholder inside a longer string is text, at either end', () => {
    const r = substitute(
      {
        a: 'n=$context.count',
        b: '$context.count items',
        c: '$test_kit.auth.port/x',
        d: 'k=$test_kit.auth.port',
        e: 'b=$context.budget',
      },
      rich,
    );
    expect(r).toEqual({
      value: { a: 'n=3', b: '3 items', c: '8080/x', d: 'k=8080', e: 'b={"total":5000,"currency":"USD"}' },
      unresolved: [],
    });
  });

  it('context names with digits and hyphens, nested keys and indexes', () => {
    const r = substitute(
      {
        a: '$context.media-buy_2',
        b: '$context.list[1].id',
        c: '$context.budget.total',
        d: 'x $context.list[0].id y',
        e: '$context.nothing',
        f: 'at $context.media-buy_2.',
      },
      rich,
    );
    expect(r).toEqual({ value: { a: 'mb_2', b: 'l1', c: 5000, d: 'x l0 y', e: null, f: 'at mb_2.' }, unresolved: [] });
  });

  it('a context value present but a path below it missing does not resolve', () => {
    const r = substitute({ a: '$context.budget.missing', b: 'x $context.budget.missing', c: '$context.list[5]' }, rich);
    expect(r.value).toEqual({ a: '$context.budget.missing', b: 'x $context.budget.missing', c: '$context.list[5]' });
    expect(r.unresolved).toEqual(['$context.budget.missing', '$context.list[5]']);
  });

  it('mustache forms: prior_step (with hyphens, whole and in text), context, spaces inside the braces', () => {
    const r = substitute(
      {
        a: '{{ prior_step.get-products_1.products[0].product_id }}',
        b: 'p={{prior_step.get-products_1.products}}',
        c: '{{context.count}}',
        d: 'c={{ context.budget.total }}!',
        e: '{{prior_step.get-products_1.products[3].product_id}}',
        f: '{{context.missing}}',
      },
      rich,
    );
    expect(r.value).toEqual({
      a: 'prod_9',
      b: 'p=[{"product_id":"prod_9"}]',
      c: 3,
      d: 'c=5000!',
      e: '{{prior_step.get-products_1.products[3].product_id}}',
      f: '{{context.missing}}',
    });
    expect(r.unresolved).toEqual(['{{prior_step.get-products_1.products[3].product_id}}', '{{context.missing}}']);
  });

  it('a test kit value that is null or absent, or no test kit at all, does not resolve', () => {
    expect(substitute({ a: '$test_kit.auth.off', b: 'x $test_kit.auth.nope' }, rich).unresolved).toEqual([
      '$test_kit.auth.off',
      '$test_kit.auth.nope',
    ]);
    expect(substitute({ a: '$test_kit.brand.name' }, { ...rich, testKit: undefined }).unresolved).toEqual([
      '$test_kit.brand.name',
    ]);
  });

  it('reports each unresolved placeholder once, and passes non-string values through', () => {
    const r = substitute(
      {
        a: '$context.nope',
        b: ['$context.nope', 'x $context.nope'],
        n: 1,
        t: true,
        z: null,
        nested: [[2, { k: '$context.count' }]],
      },
      rich,
    );
    expect(r.unresolved).toEqual(['$context.nope']);
    expect(r.value).toEqual({
      a: '$context.nope',
      b: ['$context.nope', 'x $context.nope'],
      n: 1,
      t: true,
      z: null,
      nested: [[2, { k: 3 }]],
    });
  });

  it('$generate: one value per alias (aliases with dots, angle brackets, hyphens), a fresh one per alias-less use', () => {
    const generated = new Map<string, string>();
    const r = substitute(
      {
        a: '$generate:uuid_v4#k.<1>-x',
        b: 'key $generate:uuid_v4#k.<1>-x',
        c: '$generate:uuid_v4',
        d: '$generate:uuid_v4',
        e: 'two $generate:uuid_v4 $generate:uuid_v4',
        f: '$generate:uuid_v4#other',
      },
      { ...rich, generated },
    );
    const v = r.value;
    expect(r.unresolved).toEqual([]);
    for (const x of [v.a, v.c, v.d, v.f]) expect(x).toMatch(UUID_V4);
    expect(v.b).toBe(`key ${v.a}`);
    expect(new Set([v.a, v.c, v.d, v.f]).size).toBe(4);
    const [, first, second] = v.e.split(' ');
    expect(first).toMatch(UUID_V4);
    expect(second).toMatch(UUID_V4);
    expect(first).not.toBe(second);
    expect([...generated.keys()].sort()).toEqual(['uuid_v4#k.<1>-x', 'uuid_v4#other']);
    expect(generated.get('uuid_v4#k.<1>-x')).toBe(v.a);
  });

  it('$generate does not resolve without a run scope, nor for an unknown generator', () => {
    const none = substitute({ a: '$generate:uuid_v4#k', b: 'x $generate:uuid_v4' }, rich);
    expect(none).toEqual({
      value: { a: '$generate:uuid_v4#k', b: 'x $generate:uuid_v4' },
      unresolved: ['$generate:uuid_v4#k', '$generate:uuid_v4'],
    });
    const unknown = substitute({ a: '$generate:ulid', b: 'x $generate:ulid#k' }, { ...rich, generated: new Map() });
    expect(unknown.unresolved).toEqual(['$generate:ulid', '$generate:ulid#k']);
  });

  it('resolveTask: a non-string test kit value falls back to task_default', () => {
    expect(resolveTask('$test_kit.auth.port', 'get_products', kit)).toBe('get_products');
    expect(resolveTask('$test_kit.auth.probe_task', undefined, undefined)).toBeUndefined();
    expect(resolveTask('x$test_kit.auth.probe_task', undefined, kit)).toBe('x$test_kit.auth.probe_task');
  });

  it('a whole-token placeholder keeps the type of what it reads, however deep the path or wide the index', () => {
    const r = substitute(
      {
        a: '$test_kit.auth.port',
        b: '$test_kit.geo-1.max-rate',
        c: '$test_kit.geo-1.max-rate.cpm',
        d: '$test_kit.list[11]',
        e: '$context.big[10]',
        f: '$context.big[11].id',
      },
      rich,
    );
    expect(r).toEqual({
      value: { a: 8080, b: { cpm: 2 }, c: 2, d: { n: 11 }, e: { id: 'b10' }, f: 'b11' },
      unresolved: [],
    });
  });

  it('inside text, deep paths and wide indexes are read whole', () => {
    const r = substitute(
      {
        a: 'x $test_kit.geo-1.max-rate.cpm y',
        b: 'x $test_kit.list[11].n y',
        c: 'x $context.big[10].id y',
        d: '{{context.count}} items',
        e: '$generate:uuid_v4#k tail',
      },
      { ...rich, generated: new Map() },
    );
    expect(r.value).toMatchObject({
      a: 'x 2 y',
      b: 'x 11 y',
      c: 'x b10 y',
      d: '3 items',
      e: expect.stringMatching(/^[0-9a-f-]{36} tail$/),
    });
    expect(r.unresolved).toEqual([]);
  });

  it('mustache expressions are prior_step.<id>.<path> or context.<path> exactly', () => {
    const r = substitute(
      { a: '{{xprior_step.get-products_1.products}}', b: '{{xcontext.count}}', c: '{{prior_step.get-products_1}}' },
      rich,
    );
    expect(r.unresolved).toEqual([
      '{{xprior_step.get-products_1.products}}',
      '{{xcontext.count}}',
      '{{prior_step.get-products_1}}',
    ]);
  });
});
